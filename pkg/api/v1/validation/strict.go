package validation

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// StrictUserDefinedNetwork returns what the API server accepts in u but is almost
// certainly a mistake: see Strict checks in the package comment.
func StrictUserDefinedNetwork(u *ovnkv1.UserDefinedNetwork) field.ErrorList {
	return strictBlocks(u.Spec.Layer3, u.Spec.Layer2, field.NewPath("spec"))
}

// StrictClusterUserDefinedNetwork is StrictUserDefinedNetwork for a
// ClusterUserDefinedNetwork, and also checks that its namespace selector parses (the
// CRD schema takes any operator and key; the controllers would refuse them).
func StrictClusterUserDefinedNetwork(c *ovnkv1.ClusterUserDefinedNetwork) field.ErrorList {
	var errs field.ErrorList
	if _, err := metav1.LabelSelectorAsSelector(&c.Spec.NamespaceSelector); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "namespaceSelector"), c.Spec.NamespaceSelector, err.Error()))
	}
	return append(errs, strictBlocks(c.Spec.Network.Layer3, c.Spec.Network.Layer2, field.NewPath("spec", "network"))...)
}

// pathCIDR is a CIDR and where it was found.
type pathCIDR struct {
	path *field.Path
	cidr ovnkv1.CIDR
}

// strictBlocks checks the subnets and join subnets of whichever block is set.
func strictBlocks(l3 *ovnkv1.Layer3Config, l2 *ovnkv1.Layer2Config, path *field.Path) field.ErrorList {
	var subnets, join []pathCIDR
	switch {
	case l3 != nil:
		p := path.Child("layer3")
		for i, s := range l3.Subnets {
			subnets = append(subnets, pathCIDR{p.Child("subnets").Index(i).Child("cidr"), s.CIDR})
		}
		join = indexed(p.Child("joinSubnets"), l3.JoinSubnets)
	case l2 != nil:
		p := path.Child("layer2")
		subnets = indexed(p.Child("subnets"), l2.Subnets)
		join = indexed(p.Child("joinSubnets"), l2.JoinSubnets)
	}
	var errs field.ErrorList
	for _, c := range append(append([]pathCIDR{}, subnets...), join...) {
		errs = append(errs, hostBits(c)...)
	}
	errs = append(errs, overlaps(subnets, subnets, "subnet", "list one subnet per IP family")...)
	errs = append(errs, overlaps(join, join, "join subnet", "list one join subnet per IP family")...)
	errs = append(errs, overlaps(join, subnets, "subnet", "join subnets address the gateway routers and must be outside the pod subnets")...)
	return errs
}

func indexed(path *field.Path, cidrs []ovnkv1.CIDR) []pathCIDR {
	out := make([]pathCIDR, len(cidrs))
	for i, c := range cidrs {
		out[i] = pathCIDR{path.Index(i), c}
	}
	return out
}

// hostBits refuses a CIDR whose address is not the network's own: CEL's isCIDR takes
// 10.0.0.1/16, and OVN-Kubernetes quietly uses 10.0.0.0/16, which is rarely what the
// writer had in mind.
func hostBits(c pathCIDR) field.ErrorList {
	p, ok := parseCIDR(c.cidr)
	if !ok || p == p.Masked() {
		return nil
	}
	return field.ErrorList{field.Invalid(c.path, c.cidr, fmt.Sprintf("host bits set; did you mean %s?", p.Masked()))}
}

// overlaps reports each CIDR of as that overlaps one of bs (each a "what"), naming
// both. When as and bs are the same list each pair is reported once, on the later CIDR.
func overlaps(as, bs []pathCIDR, what, fix string) field.ErrorList {
	var errs field.ErrorList
	for i, a := range as {
		pa, ok := parseCIDR(a.cidr)
		if !ok {
			continue
		}
		for j, b := range bs {
			if sameList(as, bs) && j >= i {
				break
			}
			pb, ok := parseCIDR(b.cidr)
			if ok && pa.Overlaps(pb) {
				errs = append(errs, field.Invalid(a.path, a.cidr, fmt.Sprintf("overlaps %s %s; %s", what, b.cidr, fix)))
				break
			}
		}
	}
	return errs
}

func sameList(a, b []pathCIDR) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}
