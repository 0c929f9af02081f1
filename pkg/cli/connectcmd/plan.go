package connectcmd

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/netview"
	"github.com/ovnk/ovnk/pkg/cluster"
)

// request is what `connect` was asked, read from its arguments and flags and checked
// without the cluster.
type request struct {
	// args name the networks, as typed.
	args []string
	// name is --name; "" derives one from the networks.
	name string
	// subnets is --subnet; nil takes the defaults for the networks' IP families.
	subnets []netip.Prefix
	// networkPrefix is --network-prefix (see blockPrefix).
	networkPrefix int
	connectivity  []ovnkv1.ConnectivityType
	// services are the deprecated --service-cidr: the service subnets when the agent's
	// configuration cannot be read.
	services []netip.Prefix
}

// plan is what connect does once the request passed every check: label the
// ClusterUserDefinedNetworks that lack NetworkNameLabel, then create the connect.
type plan struct {
	connect *ovnkv1.ClusterNetworkConnect
	label   []netview.Network
	// warnings are what the leader accepts but the user should know, one line each.
	warnings []string
}

// planConnect checks the request against the cluster, whose own ranges are reserved,
// and returns the plan, or the first reason to refuse it, in one line naming the
// values and the fix.
func (r *request) planConnect(snap *snapshot, reserved []cluster.ReservedRange) (*plan, error) {
	var nets []netview.Network
	for _, arg := range r.args {
		n, err := resolve(snap.networks, arg)
		if err != nil {
			return nil, err
		}
		nets = append(nets, n)
	}
	cnets := make([]*cluster.Network, len(nets))
	for i, n := range nets {
		cn, err := connectable(n, snap.model)
		if err != nil {
			return nil, err
		}
		cnets[i] = cn
	}
	if err := overlappingNetworks(nets, cnets); err != nil {
		return nil, err
	}
	subnets, err := r.connectSubnets(nets)
	if err != nil {
		return nil, err
	}
	warnings, err := reservedOverlaps(snap, reserved, nets, cnets, subnets)
	if err != nil {
		return nil, err
	}
	if err := otherConnects(snap, nets, cnets, subnets); err != nil {
		return nil, err
	}
	linkAddrs, linkText := layer3LinkAddresses(snap)
	for _, s := range subnets {
		if err := checkCapacity(s, r.networkPrefix, nets, linkAddrs, linkText); err != nil {
			return nil, err
		}
	}
	toLabel, err := labelsToAdd(snap, nets)
	if err != nil {
		return nil, err
	}
	name, err := r.connectName(snap, nets)
	if err != nil {
		return nil, err
	}
	cnc := &ovnkv1.ClusterNetworkConnect{
		TypeMeta:   metav1.TypeMeta{APIVersion: ovnkv1.SchemeGroupVersion.String(), Kind: "ClusterNetworkConnect"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: ovnkv1.ClusterNetworkConnectSpec{
			NetworkSelectors: selectorsFor(nets),
			Connectivity:     r.connectivity,
		},
	}
	for _, s := range subnets {
		cnc.Spec.ConnectSubnets = append(cnc.Spec.ConnectSubnets, s.api())
	}
	return &plan{connect: cnc, label: toLabel, warnings: warnings}, nil
}

// connectable is the network as the leader reads it, or why the leader would not
// connect it (cluster.Connectability) or would not create it at all.
func connectable(n netview.Network, model *netview.Model) (*cluster.Network, error) {
	cn, err := model.Network(n)
	if err != nil {
		return nil, fmt.Errorf("network %s cannot be connected: its spec is invalid (%w), so the leader does not create it; fix the network, or leave it out", n.Ref(), err)
	}
	switch cluster.Connectability(cn) {
	case cluster.RefusedSecondary:
		return nil, fmt.Errorf("network %s cannot be connected: it is a %s network, and only primary networks have a router to connect; leave it out", n.Ref(), strings.ToLower(string(n.Role())))
	case cluster.RefusedNoOverlay:
		return nil, fmt.Errorf("network %s cannot be connected: it uses transport NoOverlay, and connect routers need the Geneve overlay; leave it out", n.Ref())
	}
	return cn, nil
}

// overlappingNetworks refuses networks whose pod subnets overlap, by the leader's rule
// (cluster.CheckConnectedOverlap): once connected, an address would name a pod in each.
// cnets are nets as the leader reads them.
func overlappingNetworks(nets []netview.Network, cnets []*cluster.Network) error {
	for i := range cnets {
		var e *cluster.ConnectedOverlapError
		if errors.As(cluster.CheckConnectedOverlap(cnets[i], cnets[:i]), &e) {
			other := nets[slices.IndexFunc(cnets, func(cn *cluster.Network) bool { return cn.Name == e.Other })]
			return fmt.Errorf("networks %s (%s) and %s (%s) overlap: connected networks need distinct pod addresses, so connect only networks whose subnets do not overlap", other.Ref(), e.OtherSubnet, nets[i].Ref(), e.Subnet)
		}
	}
	return nil
}

// connectSubnets are --subnet, or the defaults, for the IP families of the networks:
// one per family some network has, and none of a family no network has.
func (r *request) connectSubnets(nets []netview.Network) ([]connectSubnet, error) {
	var out []connectSubnet
	for _, v4 := range []bool{true, false} {
		family := "IPv4"
		if !v4 {
			family = "IPv6"
		}
		var users []string
		for _, n := range nets {
			if hasFamily(n, v4) {
				users = append(users, n.Ref())
			}
		}
		idx := slices.IndexFunc(r.subnets, func(p netip.Prefix) bool { return p.Addr().Is4() == v4 })
		s := connectSubnet{blockPrefix: blockPrefix(r.networkPrefix, v4)}
		switch {
		case r.subnets == nil && len(users) == 0:
			continue
		case r.subnets == nil:
			s.cidr = defaultConnectSubnet(v4).CIDR
			s.origin = "the default connect subnet " + s.cidr.String()
		case idx < 0 && len(users) > 0:
			return nil, fmt.Errorf("--subnet %s: network%s %s %s %s, so give an %s connect subnet too, e.g. --subnet %s,%s",
				joinPrefixes(r.subnets), plural(len(users)), andList(users), haveS(len(users)), family, family, joinPrefixes(r.subnets), defaultConnectSubnet(v4).CIDR)
		case idx < 0:
			continue
		case len(users) == 0:
			return nil, fmt.Errorf("--subnet %s: no network to connect has %s, so leave %s out", joinPrefixes(r.subnets), family, r.subnets[idx])
		default:
			s.cidr = r.subnets[idx]
			s.origin = "--subnet " + s.cidr.String()
		}
		if err := checkBlockPrefix(s, r.networkPrefix); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func haveS(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func joinPrefixes(ps []netip.Prefix) string { return strings.Join(prefixStrings(ps), ",") }

func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// otherConnects refuses connecting networks that a connect already connects exactly, and
// connect subnets that overlap those of a connect sharing a network, by the leader's
// rule (cluster.CheckConnectConflict): both routers would hand out the same link
// addresses on that network's router, and the leader would refuse the later connect.
// cnets are nets as the leader reads them.
func otherConnects(snap *snapshot, nets []netview.Network, cnets []*cluster.Network, subnets []connectSubnet) error {
	mine := &cluster.Connect{Subnets: modelSubnets(subnets)}
	for _, cn := range cnets {
		mine.Networks = append(mine.Networks, cn.Name)
	}
	for i := range snap.connects {
		other := &snap.connects[i]
		if sameNetworks(snap.selected(other).all(), nets) {
			return fmt.Errorf("%s are already connected by connect %s (`kubectl ovnk connections describe %s` shows it)", describeNetworks(nets), other.Name, other.Name)
		}
		theirs, err := snap.model.Connect(other)
		if err != nil {
			continue // the leader connects nothing of a connect it cannot read
		}
		var e *cluster.ConnectConflictError
		if errors.As(cluster.CheckConnectConflict(mine, theirs, false), &e) {
			var common []string
			for _, n := range nets {
				if slices.Contains(e.Shared, n.OVNName()) {
					common = append(common, n.Ref())
				}
			}
			return fmt.Errorf("%s overlaps connect subnet %s of connect %s, which also connects %s: connects sharing a network need distinct connect subnets, so choose another with --subnet",
				originOf(subnets, e.Subnet), e.OtherSubnet, other.Name, andList(common))
		}
	}
	return nil
}

// layer3LinkAddresses is how many addresses a Layer3 network's block must hold, as the
// leader counts them (cluster.Layer3LinkAddresses): 2 per node id up to the highest one
// allocated, since a node's link sits at twice its id; 0 while no node has an id, when
// the leader checks nothing either. The text says so in messages.
func layer3LinkAddresses(snap *snapshot) (int, string) {
	maxID := -1
	for _, n := range snap.nodes {
		id, ok, err := cluster.NodeIDCodec.Lookup(cluster.ObjectRef{Kind: "Node", Name: n.Name}, n.Annotations)
		if err == nil && ok {
			maxID = max(maxID, id)
		}
	}
	if maxID < 0 {
		return 0, "for no node id yet"
	}
	return cluster.Layer3LinkAddresses(maxID), fmt.Sprintf("for node ids up to %d", maxID)
}

// labelsToAdd returns the named ClusterUserDefinedNetworks that lack NetworkNameLabel,
// after refusing labels that would make the selector pick another network or miss one.
func labelsToAdd(snap *snapshot, nets []netview.Network) ([]netview.Network, error) {
	var names []string
	var out []netview.Network
	for _, n := range nets {
		if !n.Cluster() {
			continue
		}
		name := n.CUDN.Name
		names = append(names, name)
		if msgs := validation.IsValidLabelValue(name); len(msgs) > 0 {
			return nil, fmt.Errorf("network %s cannot be selected by name: a label value holds its name only up to 63 characters; select it with a label of your own in a ClusterNetworkConnect written by hand", name)
		}
		if err := otherNetworksName(n.CUDN); err != nil {
			return nil, err
		}
		if _, ok := n.CUDN.Labels[NetworkNameLabel]; !ok {
			out = append(out, n)
		}
	}
	for _, n := range snap.networks {
		if !n.Cluster() {
			continue
		}
		if v, ok := n.CUDN.Labels[NetworkNameLabel]; ok && v != n.CUDN.Name && slices.Contains(names, v) {
			return nil, fmt.Errorf("ClusterUserDefinedNetwork %s has label %s=%s, so a connect of %s would select it too: remove the label with `kubectl label clusteruserdefinednetwork %s %s-`",
				n.CUDN.Name, NetworkNameLabel, v, v, n.CUDN.Name, NetworkNameLabel)
		}
	}
	return out, nil
}

// otherNetworksName refuses a ClusterUserDefinedNetwork whose NetworkNameLabel names
// another network: a connect selecting it by its own name would miss it.
func otherNetworksName(cudn *ovnkv1.ClusterUserDefinedNetwork) error {
	if v, ok := cudn.Labels[NetworkNameLabel]; ok && v != cudn.Name {
		return fmt.Errorf("network %s has label %s=%s, which names another network: connect selects networks by that label, so fix it with `kubectl label clusteruserdefinednetwork %s %s=%s --overwrite`",
			cudn.Name, NetworkNameLabel, v, cudn.Name, NetworkNameLabel, cudn.Name)
	}
	return nil
}

// maxNameLength keeps derived names DNS labels.
const maxNameLength = validation.DNS1123LabelMaxLength

// connectName is --name, checked to be free, or a free name derived from the networks:
// "blue-green" for blue and green, "ns-tenant-blue" for ns/tenant and blue.
func (r *request) connectName(snap *snapshot, nets []netview.Network) (string, error) {
	if r.name != "" {
		if c := snap.connect(r.name); c != nil {
			return "", fmt.Errorf("--name %s: connect %s already exists (it connects %s): choose another name", r.name, r.name, networksOrNone(describeNetworks(snap.selected(c).all())))
		}
		return r.name, nil
	}
	parts := make([]string, len(nets))
	for i, n := range nets {
		parts[i] = strings.NewReplacer("/", "-", ".", "-").Replace(n.Ref())
	}
	base := strings.Join(parts, "-")
	if len(base) > maxNameLength-3 {
		// Long names keep their start and get a digest of the whole, so that two long
		// lists of networks do not end up with the same name.
		sum := sha256.Sum256([]byte(base))
		base = strings.TrimRight(base[:maxNameLength-3-9], "-") + "-" + hex.EncodeToString(sum[:])[:8]
	}
	name := base
	for i := 2; snap.connect(name) != nil; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	return name, nil
}

func networksOrNone(s string) string {
	if s == "" {
		return "no network"
	}
	return s
}
