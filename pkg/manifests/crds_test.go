package manifests

import (
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// These tests read the embedded CRDs only. That the API server accepts them, and that
// the rules refuse what they should, is tested against a real kube-apiserver in
// pkg/api/v1.

func crdsByName(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]*apiextensionsv1.CustomResourceDefinition, len(crds))
	for _, crd := range crds {
		byName[crd.Name] = crd
	}
	return byName
}

func TestCRDNames(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, kind, plural string
		shortNames         []string
		scope              apiextensionsv1.ResourceScope
		status             bool
	}{
		{"clusternetworkconnects.k8s.ovn.org", "ClusterNetworkConnect", "clusternetworkconnects", []string{"cnc"}, apiextensionsv1.ClusterScoped, true},
		{"clusteruserdefinednetworks.k8s.ovn.org", "ClusterUserDefinedNetwork", "clusteruserdefinednetworks", []string{"cudn"}, apiextensionsv1.ClusterScoped, true},
		// Upstream's EgressIP has no status subresource: its controller writes status
		// with ordinary updates, which a subresource would silently strip.
		{"egressips.k8s.ovn.org", "EgressIP", "egressips", []string{"eip"}, apiextensionsv1.ClusterScoped, false},
		{"routeadvertisements.k8s.ovn.org", "RouteAdvertisements", "routeadvertisements", []string{"ra"}, apiextensionsv1.ClusterScoped, true},
		{"userdefinednetworks.k8s.ovn.org", "UserDefinedNetwork", "userdefinednetworks", []string{"udn"}, apiextensionsv1.NamespaceScoped, true},
	}
	if len(crds) != len(want) {
		names := make([]string, 0, len(crds))
		for _, crd := range crds {
			names = append(names, crd.Name)
		}
		t.Fatalf("CRDs() returned %d CRDs %v, want %d", len(crds), names, len(want))
	}
	for i, w := range want {
		crd := crds[i]
		if crd.Name != w.name {
			t.Errorf("CRD %d is %s, want %s (sorted by name)", i, crd.Name, w.name)
			continue
		}
		n := crd.Spec.Names
		if crd.Spec.Group != "k8s.ovn.org" || n.Kind != w.kind || n.Plural != w.plural || n.ListKind != w.kind+"List" {
			t.Errorf("%s: group %s kind %s plural %s listKind %s, want k8s.ovn.org %s %s %sList",
				w.name, crd.Spec.Group, n.Kind, n.Plural, n.ListKind, w.kind, w.plural, w.kind)
		}
		if !slices.Equal(n.ShortNames, w.shortNames) {
			t.Errorf("%s: short names %v, want %v", w.name, n.ShortNames, w.shortNames)
		}
		if crd.Spec.Scope != w.scope {
			t.Errorf("%s: scope %s, want %s", w.name, crd.Spec.Scope, w.scope)
		}
		if len(crd.Spec.Versions) != 1 {
			t.Fatalf("%s: %d versions, want only v1", w.name, len(crd.Spec.Versions))
		}
		v := crd.Spec.Versions[0]
		if v.Name != "v1" || !v.Served || !v.Storage {
			t.Errorf("%s: version %s served=%t storage=%t, want v1 served and stored", w.name, v.Name, v.Served, v.Storage)
		}
		hasStatus := v.Subresources != nil && v.Subresources.Status != nil
		if hasStatus != w.status {
			t.Errorf("%s: status subresource %t, want %t", w.name, hasStatus, w.status)
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			t.Errorf("%s: no schema", w.name)
		}
	}
}

// TestSharedCRDs pins the NetworkAttachmentDefinition CRD to the names and shape
// Multus' own has, so that either may be installed first and the other's objects are
// served the same: the group, kind, plural and short name clients use, one namespaced
// version v1 without a status subresource, and spec.config a string that nothing
// requires.
func TestSharedCRDs(t *testing.T) {
	crds, err := SharedCRDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 1 {
		t.Fatalf("SharedCRDs() returned %d CRDs, want only the NetworkAttachmentDefinition's", len(crds))
	}
	crd := crds[0]
	n := crd.Spec.Names
	if crd.Name != "network-attachment-definitions.k8s.cni.cncf.io" || crd.Spec.Group != "k8s.cni.cncf.io" ||
		n.Kind != "NetworkAttachmentDefinition" || n.ListKind != "NetworkAttachmentDefinitionList" ||
		n.Plural != "network-attachment-definitions" || n.Singular != "network-attachment-definition" ||
		!slices.Equal(n.ShortNames, []string{"net-attach-def"}) || crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("CRD %s: group %s, names %+v, scope %s", crd.Name, crd.Spec.Group, n, crd.Spec.Scope)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%d versions, want only v1", len(crd.Spec.Versions))
	}
	v := crd.Spec.Versions[0]
	if v.Name != "v1" || !v.Served || !v.Storage || v.Subresources != nil {
		t.Errorf("version %s served=%t storage=%t subresources %+v, want v1 served and stored, no subresources", v.Name, v.Served, v.Storage, v.Subresources)
	}
	root := v.Schema.OpenAPIV3Schema
	config, msg := schemaAt(root, "spec.config")
	if msg != "" {
		t.Fatalf("spec.config: %s", msg)
	}
	spec, _ := schemaAt(root, "spec")
	if config.Type != "string" || len(root.Required) > 0 || len(spec.Required) > 0 {
		t.Errorf("spec.config has type %q; required at the top %q, in spec %q; want a string and nothing required", config.Type, root.Required, spec.Required)
	}
	for _, c := range crds {
		for _, own := range crdsByName(t) {
			if own.Name == c.Name {
				t.Errorf("CRD %s is both ovnk's own and shared", c.Name)
			}
		}
	}
}

// TestValidationRules checks that each rule sits on the schema node it is meant for: a
// rule on the wrong node either never runs (e.g. an immutability rule on an optional
// field does not see the field being added) or reports the wrong path.
func TestValidationRules(t *testing.T) {
	crds := crdsByName(t)
	for _, tc := range []struct {
		crd, path string
		rule      string // substring of one rule on the node
	}{
		// OKEP-5259: NoOverlay only for Layer3 Primary, and noOverlay iff NoOverlay.
		{"clusteruserdefinednetworks", "spec.network", "self.transport != 'NoOverlay' || (self.topology == 'Layer3' && has(self.layer3) && self.layer3.role == 'Primary')"},
		{"clusteruserdefinednetworks", "spec.network", "self.transport != 'NoOverlay' || has(self.noOverlay)"},
		{"clusteruserdefinednetworks", "spec.network", "!has(self.noOverlay) || (has(self.transport) && self.transport == 'NoOverlay')"},
		{"clusteruserdefinednetworks", "spec.network", "self.topology == 'Layer3' ? has(self.layer3) : !has(self.layer3)"},
		// Immutability; optional fields are checked from their parent.
		{"clusteruserdefinednetworks", "spec.network", "(has(oldSelf.transport) ? oldSelf.transport : 'Geneve')"},
		{"clusteruserdefinednetworks", "spec.network", "self.noOverlay == oldSelf.noOverlay"},
		{"clusteruserdefinednetworks", "spec.network.topology", "self == oldSelf"},
		{"clusteruserdefinednetworks", "spec.network.layer3.role", "self == oldSelf"},
		{"clusteruserdefinednetworks", "spec.network.layer3.subnets", "self == oldSelf"},
		{"clusteruserdefinednetworks", "spec.network.layer3", "self.joinSubnets == oldSelf.joinSubnets"},
		{"clusteruserdefinednetworks", "spec.network.layer3", "oldSelf.mtu"},
		{"clusteruserdefinednetworks", "spec.network.layer2.role", "self == oldSelf"},
		{"clusteruserdefinednetworks", "spec.network.layer2", "self.subnets == oldSelf.subnets"},
		{"clusteruserdefinednetworks", "spec.network.layer2", "self.joinSubnets == oldSelf.joinSubnets"},
		{"clusteruserdefinednetworks", "spec.network.layer2", "self.ipam == oldSelf.ipam"},
		// CIDRs and dual-stack families.
		{"clusteruserdefinednetworks", "spec.network.layer3.subnets[].cidr", "isCIDR(self)"},
		{"clusteruserdefinednetworks", "spec.network.layer3.subnets", "cidr(self[0].cidr).ip().family() != cidr(self[1].cidr).ip().family()"},
		{"clusteruserdefinednetworks", "spec.network.layer3.subnets[]", "self.hostSubnet > cidr(self.cidr).prefixLength()"},
		{"clusteruserdefinednetworks", "spec.network.layer3.subnets[]", "self.hostSubnet <= (cidr(self.cidr).ip().family() == 4 ? 30 : 126)"},
		{"clusteruserdefinednetworks", "spec.network.layer3.joinSubnets", "cidr(self[0]).ip().family() != cidr(self[1]).ip().family()"},
		{"clusteruserdefinednetworks", "spec.network.layer3.joinSubnets[]", "isCIDR(self)"},
		{"clusteruserdefinednetworks", "spec.network.layer2.subnets", "cidr(self[0]).ip().family() != cidr(self[1]).ip().family()"},
		{"clusteruserdefinednetworks", "spec.network.layer2.subnets[]", "isCIDR(self)"},

		{"userdefinednetworks", "spec", "self.topology == 'Layer2' ? has(self.layer2) : !has(self.layer2)"},
		{"userdefinednetworks", "spec.topology", "self == oldSelf"},
		{"userdefinednetworks", "spec.layer3.subnets", "self == oldSelf"},
		{"userdefinednetworks", "spec.layer3.role", "self == oldSelf"},
		{"userdefinednetworks", "spec.layer2", "self.subnets == oldSelf.subnets"},

		{"clusternetworkconnects", "spec", "s.networkSelectionType == 'ClusterUserDefinedNetworks' || s.networkSelectionType == 'PrimaryUserDefinedNetworks'"},
		{"clusternetworkconnects", "spec.connectSubnets", "self == oldSelf"},
		{"clusternetworkconnects", "spec.connectSubnets", "cidr(self[0].cidr).ip().family() != cidr(self[1].cidr).ip().family()"},
		{"clusternetworkconnects", "spec.connectSubnets[]", "self.networkPrefix > cidr(self.cidr).prefixLength()"},
		{"clusternetworkconnects", "spec.connectSubnets[].cidr", "cidr(self) == cidr(self).masked()"},
		{"clusternetworkconnects", "spec.connectivity", "self.all(x, self.exists_one(y, x == y))"},
		{"clusternetworkconnects", "spec.networkSelectors[]", "has(self.clusterUserDefinedNetworkSelector)"},

		{"egressips", "spec.egressIPs[]", "isIP(self)"},

		{"routeadvertisements", "spec", "'PodNetwork' in self.advertisements"},
		{"routeadvertisements", "spec", "s.networkSelectionType == 'DefaultNetwork' || s.networkSelectionType == 'ClusterUserDefinedNetworks'"},
		{"routeadvertisements", "spec.advertisements", "self.all(x, self.exists_one(y, x == y))"},
	} {
		crd := crds[tc.crd+".k8s.ovn.org"]
		if crd == nil {
			t.Errorf("no CRD %s", tc.crd)
			continue
		}
		node, err := schemaAt(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, tc.path)
		if err != "" {
			t.Errorf("%s %s: %s", tc.crd, tc.path, err)
			continue
		}
		found := false
		for _, r := range node.XValidations {
			if strings.Contains(r.Rule, tc.rule) {
				found = true
				if r.Message == "" {
					t.Errorf("%s %s: rule %q has no message", tc.crd, tc.path, r.Rule)
				}
			}
		}
		if !found {
			rules := make([]string, 0, len(node.XValidations))
			for _, r := range node.XValidations {
				rules = append(rules, r.Rule)
			}
			t.Errorf("%s %s: no rule containing %q; rules there: %q", tc.crd, tc.path, tc.rule, rules)
		}
	}
}

// TestEnums pins the enum values that must match upstream for objects to be
// interchangeable.
func TestEnums(t *testing.T) {
	crds := crdsByName(t)
	for _, tc := range []struct {
		crd, path string
		want      []string
	}{
		{"clusteruserdefinednetworks", "spec.network.topology", []string{"Layer2", "Layer3"}},
		{"clusteruserdefinednetworks", "spec.network.transport", []string{"NoOverlay", "Geneve"}},
		{"clusteruserdefinednetworks", "spec.network.noOverlay.outboundSNAT", []string{"Enabled", "Disabled"}},
		{"clusteruserdefinednetworks", "spec.network.noOverlay.routing", []string{"Managed", "Unmanaged"}},
		{"clusteruserdefinednetworks", "spec.network.layer3.role", []string{"Primary", "Secondary"}},
		{"clusteruserdefinednetworks", "spec.network.layer2.ipam.mode", []string{"Enabled", "Disabled"}},
		{"clusteruserdefinednetworks", "spec.network.layer2.ipam.lifecycle", []string{"Persistent"}},
		{"userdefinednetworks", "spec.topology", []string{"Layer2", "Layer3"}},
		{"clusternetworkconnects", "spec.connectivity[]", []string{"PodNetwork", "ClusterIPServiceNetwork"}},
		{"clusternetworkconnects", "spec.networkSelectors[].networkSelectionType", []string{"DefaultNetwork", "ClusterUserDefinedNetworks", "PrimaryUserDefinedNetworks", "SecondaryUserDefinedNetworks", "NetworkAttachmentDefinitions"}},
		{"routeadvertisements", "spec.advertisements[]", []string{"PodNetwork", "EgressIP"}},
	} {
		node, err := schemaAt(crds[tc.crd+".k8s.ovn.org"].Spec.Versions[0].Schema.OpenAPIV3Schema, tc.path)
		if err != "" {
			t.Errorf("%s %s: %s", tc.crd, tc.path, err)
			continue
		}
		var got []string
		for _, e := range node.Enum {
			got = append(got, strings.Trim(string(e.Raw), `"`))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: enum %q, want %q", tc.crd, tc.path, got, tc.want)
		}
	}
}

// TestCELInputsAreBounded checks what the API server's cost estimate needs: a list or
// string that a rule is attached to, directly or through its items, has a maximum size.
// Without one the estimate assumes the largest possible request and refuses the CRD.
func TestCELInputsAreBounded(t *testing.T) {
	for _, crd := range crdsByName(t) {
		walkSchema(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, crd.Name, func(path string, s *apiextensionsv1.JSONSchemaProps) {
			switch s.Type {
			case "array":
				itemRules := s.Items != nil && s.Items.Schema != nil && len(s.Items.Schema.XValidations) > 0
				if (len(s.XValidations) > 0 || itemRules) && s.MaxItems == nil {
					t.Errorf("%s: a list checked by CEL rules has no maxItems", path)
				}
			case "string":
				if len(s.XValidations) > 0 && s.MaxLength == nil && len(s.Enum) == 0 {
					t.Errorf("%s: a string checked by CEL rules has no maxLength", path)
				}
			}
		})
	}
}

// schemaAt follows a dotted path of property names; a "[]" suffix steps into the items
// of a list. It returns an error text naming the step that does not exist.
func schemaAt(root *apiextensionsv1.JSONSchemaProps, path string) (*apiextensionsv1.JSONSchemaProps, string) {
	node := root
	for _, step := range strings.Split(path, ".") {
		name, items := strings.CutSuffix(step, "[]")
		prop, ok := node.Properties[name]
		if !ok {
			return nil, "no property " + name
		}
		node = &prop
		if items {
			if node.Items == nil || node.Items.Schema == nil {
				return nil, name + " is not a list"
			}
			node = node.Items.Schema
		}
	}
	return node, ""
}

// walkSchema calls fn for every node of the schema, with a dotted path.
func walkSchema(s *apiextensionsv1.JSONSchemaProps, path string, fn func(string, *apiextensionsv1.JSONSchemaProps)) {
	fn(path, s)
	for name, prop := range s.Properties {
		walkSchema(&prop, path+"."+name, fn)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkSchema(s.Items.Schema, path+"[]", fn)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(s.AdditionalProperties.Schema, path+"{}", fn)
	}
}
