package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/sandbox"
	"github.com/ovnk/ovnk/test/testenv"
)

// Every e2e node is a real host, as in pkg/sandbox: a network namespace on an underlay
// bridge, its own OVS (userspace datapath), its zone's NB, SB, northd and
// ovn-controller, and its agent running inside the namespace. The test does only the
// installer's part (br-ex with the uplink and the node's address, OVS's system-id); the
// agent reads the node and publishes its annotations itself.

// gatewayBridge is the nodes' external bridge (kind's name for br-ex): the agent
// publishes its gateway interface as <gatewayBridge>_<node>.
const gatewayBridge = "breth0"

// underlayRouter is the underlay's address: the bridge joining the nodes is also their
// default router.
const underlayRouter = "172.18.0.1"

// nodeGateway is the gateway the test configures on node name's br-ex (host
// hostOctet): the values the e2e tests once wrote into the annotation themselves.
func nodeGateway(name string, hostOctet int) cluster.Gateway {
	return cluster.Gateway{
		Mode: cluster.GatewayModeShared, InterfaceID: gatewayBridge + "_" + name,
		MAC:      fmt.Sprintf("02:42:ac:12:00:%02x", hostOctet),
		IPs:      prefixes(fmt.Sprintf("172.18.0.%d/16", hostOctet)),
		NextHops: addrs(underlayRouter),
	}
}

// underlay returns the namespace holding the bridge that joins the cluster's nodes,
// making it on first use.
func (ec *e2eCluster) underlay(ctx context.Context) *testenv.Netns {
	if ec.router != nil {
		return ec.router
	}
	ec.router = testenv.NewNetns(ec.t)
	for _, args := range [][]string{
		{"link", "add", "br0", "type", "bridge"},
		{"addr", "add", underlayRouter + "/16", "dev", "br0"},
		{"link", "set", "br0", "up"},
	} {
		if _, err := ec.router.IP(ctx, args...); err != nil {
			ec.t.Fatalf("underlay: %v", err)
		}
	}
	return ec.router
}

// startHost makes n a host: its namespace on the underlay, its zone (NB, SB, northd),
// OVS with the installer's br-ex, ovn-controller, and the forwarder to and from the
// host's loopback.
func (ec *e2eCluster) startHost(ctx context.Context, n *node) {
	t := ec.t
	gw := nodeGateway(n.name, n.hostOctet)
	n.nb = testenv.StartNB(t)
	n.northd = testenv.StartNorthd(t, n.nb)
	n.ns = testenv.NewNetns(t)
	v := testenv.Connect(t, ec.underlay(ctx), netip.Prefix{}, n.ns, netip.Prefix{})
	if _, err := ec.router.IP(ctx, "link", "set", v.AName, "master", "br0"); err != nil {
		t.Fatalf("%s underlay: %v", n.name, err)
	}
	uplink := v.BName
	// TSO must be on before vswitchd starts (it is read at start only).
	n.ovs = testenv.StartOVSInNetns(t, n.ns, map[string]string{"userspace-tso-enable": "true"})
	if _, err := n.ovs.VSCtl(ctx,
		"add-br", gatewayBridge, "--", "set", "Bridge", gatewayBridge, "datapath_type=netdev", "other_config:hwaddr="+gw.MAC,
		"--", "add-port", gatewayBridge, uplink,
		"--", "set", "Open_vSwitch", ".", "external_ids:system-id=chassis-"+n.name,
	); err != nil {
		t.Fatalf("%s bridges: %v", n.name, err)
	}
	// arp off: the kernel must not answer ARP for the node's address on the veth, with
	// the veth's MAC, past br-ex.
	cmds := [][]string{
		{"link", "set", uplink, "arp", "off"},
		{"link", "set", gatewayBridge, "address", gw.MAC},
	}
	for _, a := range gw.IPs {
		cmds = append(cmds, []string{"addr", "add", a.String(), "dev", gatewayBridge})
	}
	cmds = append(cmds, []string{"link", "set", gatewayBridge, "up"})
	for _, nh := range gw.NextHops {
		cmds = append(cmds, []string{"route", "add", "default", "via", nh.String(), "dev", gatewayBridge})
	}
	for _, args := range cmds {
		if _, err := n.ns.IP(ctx, args...); err != nil {
			t.Fatalf("%s: %v", n.name, err)
		}
	}
	prog, err := testenv.NeedOVN(t).Program("ovn-controller")
	if err != nil {
		t.Fatal(err)
	}
	dir := n.ovs.Dir()
	testenv.StartProcess(t, dir, "ovn-controller", n.ovs.Env(),
		"ip", "netns", "exec", n.ns.Name, prog, n.ovs.DB.Endpoint,
		"--unixctl="+filepath.Join(dir, "ovn-controller.ctl"),
		"--pidfile="+filepath.Join(dir, "ovn-controller.pid"),
		"--log-file="+filepath.Join(dir, "ovn-controller.vlog"),
	)
	ec.forward(n)
}

// forward runs, for the rest of the test, pkg/sandbox's forwarder for n: the API
// server at the node's 127.0.0.1:6443, and the agent's HTTP endpoint at n.http on the
// host, so the tests reach it as before.
func (ec *e2eCluster) forward(n *node) {
	t := ec.t
	u, err := url.Parse(ec.kube.RESTConfig.Host)
	if err != nil {
		t.Fatalf("API server address %q: %v", ec.kube.RESTConfig.Host, err)
	}
	n.http = freeAddr(t)
	data, err := json.Marshal(sandbox.ForwarderConfig{Forwards: []sandbox.Forward{
		{ListenNetns: n.ns.Name, Listen: sandbox.NodeAPIServer, Dial: u.Host},
		{Listen: n.http, DialNetns: n.ns.Name, Dial: sandbox.NodeAgentHTTP},
	}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "forward.json")
	if err := os.WriteFile(config, data, 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "forward.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.forwarder = make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := sandbox.RunForwarder(ctx, config, logf)
		if ctx.Err() == nil {
			// It stopped before the test ended: a listener could not be bound (it
			// binds them all before serving). waitReady reports it.
			n.forwarder <- fmt.Errorf("forwarder of node %s stopped early: %w", n.name, err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("forwarder of %s:\n%s", n.name, b)
		}
	})
}

// nodeKubeconfig writes, once, the agents' kubeconfig: the test's admin credentials
// with the API server at the node's own loopback (the server's certificate covers
// 127.0.0.1).
func (ec *e2eCluster) nodeKubeconfig() string {
	if ec.kubeconfig != "" {
		return ec.kubeconfig
	}
	cfg, err := clientcmd.LoadFromFile(ec.kube.Kubeconfig)
	if err != nil {
		ec.t.Fatalf("load kubeconfig %s: %v", ec.kube.Kubeconfig, err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + sandbox.NodeAPIServer
	}
	path := filepath.Join(ec.t.TempDir(), "node-kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		ec.t.Fatalf("write kubeconfig %s: %v", path, err)
	}
	ec.kubeconfig = path
	return path
}

// agentEnv is the environment of n's agent: the node's OVS and OVN run directory,
// and the OVN root's tools (ovs-ofctl for br-ex's flows) on PATH.
func agentEnv(t *testing.T, n *node) []string {
	ofctl, err := testenv.NeedOVN(t).Program("ovs-ofctl")
	if err != nil {
		t.Fatal(err)
	}
	return append(n.ovs.Env(), "PATH="+filepath.Dir(ofctl)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// requirePublished waits until n's agent has published its chassis, gateway and
// primary addresses, and fails unless they are what the test made the host: the
// values the zones' expectations are compiled from.
func (ec *e2eCluster) requirePublished(ctx context.Context, n *node) {
	ec.t.Helper()
	// What the old test wrote itself, plus the two fields a real agent adds: the
	// bridge its gateway is on, and node ports (on unless configured off).
	want := nodeGateway(n.name, n.hostOctet)
	want.BridgeID, want.NodePortEnable = gatewayBridge, true
	ref := cluster.ObjectRef{Kind: "Node", Name: n.name}
	var last string
	err := testenv.Eventually(ctx, 60*time.Second, "node "+n.name+"'s annotations", func(ctx context.Context) error {
		var obj corev1.Node
		if err := ec.c.Get(ctx, ctrlclient.ObjectKey{Name: n.name}, &obj); err != nil {
			return err
		}
		a := obj.Annotations
		last = fmt.Sprint(a)
		for _, k := range []string{cluster.AnnotationNodeChassisID, cluster.AnnotationL3GatewayConfig, cluster.AnnotationNodePrimaryIfAddr} {
			if a[k] == "" {
				return fmt.Errorf("no %s yet", k)
			}
		}
		var problems []string
		if got := a[cluster.AnnotationNodeChassisID]; got != "chassis-"+n.name {
			problems = append(problems, fmt.Sprintf("chassis %q, want %q", got, "chassis-"+n.name))
		}
		gw, err := cluster.L3GatewayConfigCodec.Parse(ref, a[cluster.AnnotationL3GatewayConfig])
		if err != nil {
			problems = append(problems, err.Error())
		} else if !reflect.DeepEqual(gw, want) {
			problems = append(problems, fmt.Sprintf("gateway %+v, want %+v", gw, want))
		}
		primary, err := cluster.PrimaryIfAddrCodec.Parse(ref, a[cluster.AnnotationNodePrimaryIfAddr])
		if err != nil {
			problems = append(problems, err.Error())
		} else if !reflect.DeepEqual(primary, want.IPs) {
			problems = append(problems, fmt.Sprintf("primary addresses %v, want %v", primary, want.IPs))
		}
		if len(problems) > 0 {
			// Published, and wrong: waiting will not fix it.
			return poll.Stop(errors.New(strings.Join(problems, "; ")))
		}
		return nil
	})
	if err != nil {
		ec.t.Fatalf("%v\nannotations: %s\n%s", err, last, n.agent.LogTail(30))
	}
}
