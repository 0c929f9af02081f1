package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/ovn/nbdb"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// clusterSubnets is the default network's subnets and host prefix, in the agent's
// --cluster-subnets form.
const clusterSubnets = "10.244.0.0/16/24"

// newNodes names the nodes and their NB endpoints; node i lives in <dir>/n<i>.
func newNodes(dir string) []Node {
	nodes := make([]Node, 0, nodeCount)
	for i, name := range NodeNames() {
		n := Node{Name: name, Dir: "n" + strconv.Itoa(i+1)}
		n.NBEndpoint = "unix:" + n.socket(dir)
		nodes = append(nodes, n)
	}
	return nodes
}

func (n Node) socket(dir string) string        { return filepath.Join(dir, n.Dir, "nb.sock") }
func (n Node) controlSocket(dir string) string { return filepath.Join(dir, n.Dir, "nb.ctl") }

func (s *Sandbox) nb(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" NB", filepath.Join(n.Dir, "ovsdb-server"))
}

func (s *Sandbox) agent(n Node) *daemon {
	return daemonAt(s.Dir, n.Name+" agent", filepath.Join(n.Dir, "agent"))
}

// object is the Node with the annotations that ovnkube-node would publish about a
// real node (its chassis, its gateway, its primary address); the agents' compiler
// needs them and nothing else here sets them. Node i gets 172.18.0.(i+2)/16, as on
// a kind network.
func (n Node) object(i int) (*corev1.Node, error) {
	octet := i + 2
	addr := netip.MustParsePrefix(fmt.Sprintf("172.18.0.%d/16", octet))
	gateway, err := cluster.L3GatewayConfigCodec.Format(cluster.Gateway{
		Mode:        cluster.GatewayModeShared,
		InterfaceID: "breth0_" + n.Name,
		MAC:         fmt.Sprintf("02:42:ac:12:00:%02x", octet),
		IPs:         []netip.Prefix{addr},
		NextHops:    []netip.Addr{netip.MustParseAddr("172.18.0.1")},
	})
	if err != nil {
		return nil, fmt.Errorf("gateway annotation of node %s: %w", n.Name, err)
	}
	primary, err := cluster.PrimaryIfAddrCodec.Format([]netip.Prefix{addr})
	if err != nil {
		return nil, fmt.Errorf("primary address annotation of node %s: %w", n.Name, err)
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   n.Name,
		Labels: map[string]string{corev1.LabelHostname: n.Name},
		Annotations: map[string]string{
			cluster.AnnotationNodeChassisID:     "chassis-" + n.Name,
			cluster.AnnotationL3GatewayConfig:   gateway,
			cluster.AnnotationNodePrimaryIfAddr: primary,
		},
	}}, nil
}

// startNBs creates every node's NB database from the schema ovnk's models were
// generated from (the one the agent is built for), starts an ovsdb-server per node on
// a unix socket, and waits until each accepts connections.
func (s *Sandbox) startNBs(ctx context.Context, bins binaries) error {
	schema, err := json.Marshal(nbdb.Schema())
	if err != nil {
		return fmt.Errorf("encode the NB schema: %w", err)
	}
	schemaPath := filepath.Join(s.Dir, "ovn-nb.ovsschema")
	if err := os.WriteFile(schemaPath, schema, 0o644); err != nil {
		return fmt.Errorf("write the NB schema: %w", err)
	}
	return s.inParallel(func(n *Node) error {
		dir := filepath.Join(s.Dir, n.Dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create directory of node %s: %w", n.Name, err)
		}
		db := filepath.Join(dir, "nb.db")
		if out, err := exec.CommandContext(ctx, bins.ovsdbTool, "create", db, schemaPath).CombinedOutput(); err != nil {
			return fmt.Errorf("create the NB database of node %s: %w: %s", n.Name, err, strings.TrimSpace(string(out)))
		}
		d := s.nb(*n)
		// OVS tools put control sockets and logs under /var/run unless told otherwise.
		env := []string{"OVS_RUNDIR=" + dir, "OVS_DBDIR=" + dir, "OVS_LOGDIR=" + dir}
		if err := d.startDetached(dir, env, bins.ovsdbServer, db,
			"--remote=punix:"+n.socket(s.Dir),
			"--unixctl="+n.controlSocket(s.Dir),
		); err != nil {
			return err
		}
		return waitStarted(ctx, d, nbTimeout, "the NB of "+n.Name+" to accept connections", poll.Dials("unix", n.socket(s.Dir)))
	})
}

// startAgents starts an agent per node, each with its own NB and HTTP port, and waits
// until every one is ready (connected to its NB, its zone reconciled).
func (s *Sandbox) startAgents(ctx context.Context, path string) error {
	return s.inParallel(func(n *Node) error {
		return retryOnPortClash(func() (*daemon, error) {
			port, err := procutil.FreePort()
			if err != nil {
				return nil, err
			}
			n.HTTPAddress = "127.0.0.1:" + strconv.Itoa(port)
			d := s.agent(*n)
			if err := d.startDetached(filepath.Join(s.Dir, n.Dir), nil, path, "run",
				"--config=", // no agent.conf: everything is on the command line
				"--kubeconfig", s.Kubeconfig,
				"--node-name", n.Name,
				"--nb-address", n.NBEndpoint,
				"--http-address", n.HTTPAddress,
				"--cluster-subnets", clusterSubnets,
				"--leader-election-namespace", manifests.DefaultNamespace,
			); err != nil {
				return nil, err
			}
			return d, waitStarted(ctx, d, agentTimeout, "the agent of "+n.Name+" to be ready", poll.HTTPOK("http://"+n.HTTPAddress+"/readyz"))
		})
	})
}
