// Package agent assembles the node agent: a controller-runtime manager whose zone
// controller runs on every node and whose leader controllers run on the one replica
// that holds the Lease, plus the HTTP endpoints for probes and metrics.
package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ovnk/ovnk/pkg/agent/config"
	"github.com/ovnk/ovnk/pkg/agent/heartbeat"
	"github.com/ovnk/ovnk/pkg/agent/host"
	"github.com/ovnk/ovnk/pkg/agent/leader"
	"github.com/ovnk/ovnk/pkg/agent/zone"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cluster"
	"github.com/ovnk/ovnk/pkg/host/netconf"
	"github.com/ovnk/ovnk/pkg/host/openflow"
	"github.com/ovnk/ovnk/pkg/host/sbchassis"
	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/pkg/l2upgrade"
	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovsdbconn"
	"github.com/ovnk/ovnk/pkg/version"
)

// Scheme holds the Kubernetes types the agent reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := ovnkv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// RESTConfig is the API server connection of cfg: its kubeconfig, or the pod's own
// service account, at cfg.APIServer when that is set.
func RESTConfig(cfg *config.Config) (*rest.Config, error) {
	if cfg.Kubeconfig == "" && cfg.APIServer != "" {
		// What rest.InClusterConfig does, with the address given rather than the
		// kubernetes Service's: the token file is re-read as it rotates.
		return &rest.Config{
			Host:            cfg.APIServer,
			BearerTokenFile: serviceAccountDir + "/token",
			TLSClientConfig: rest.TLSClientConfig{CAFile: serviceAccountDir + "/ca.crt"},
		}, nil
	}
	if cfg.Kubeconfig == "" {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig given and not running in a pod: %w", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	return rc, nil
}

// serviceAccountDir is where kubelet mounts a pod's service account token and CA.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Run runs the agent until ctx ends.
func Run(ctx context.Context, cfg *config.Config) error {
	restConfig, err := RESTConfig(cfg)
	if err != nil {
		return err
	}
	scheme, err := Scheme()
	if err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	nb, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: cfg.NBEndpoints, LeaderOnly: true, InactivityProbe: 30 * time.Second})
	if err != nil {
		return err
	}
	defer nb.Close()
	nbConnected := func() bool { return ovsdbconn.Connected(nb) }

	le := cfg.LeaderElection
	if name := cluster.HeartbeatLeaseName(cfg.NodeName); le.Enabled && name == le.LeaseName {
		return fmt.Errorf("leader-election.lease-name %q is node %s's heartbeat Lease: choose another name", le.LeaseName, cfg.NodeName)
	}
	mgr, err := ctrl.NewManager(restConfig, manager.Options{
		Scheme: scheme,
		// Nothing reads the objects' managedFields, and at scale they are a good part
		// of the informers' footprint (a pod's are as large as its spec).
		Cache:                         cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		Metrics:                       metricsserver.Options{BindAddress: "0"}, // served by our own endpoint below
		HealthProbeBindAddress:        "0",
		LeaderElection:                le.Enabled,
		LeaderElectionID:              le.LeaseName,
		LeaderElectionNamespace:       le.Namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(le.LeaseDuration),
		RenewDeadline:                 ptr.To(le.RenewDeadline),
		RetryPeriod:                   ptr.To(le.RetryPeriod),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}

	layer2, err := l2upgrade.ParseMode(cfg.Layer2Topology)
	if err != nil {
		return fmt.Errorf("layer2-topology: %w", err)
	}
	zc := &zone.Controller{
		Client:         mgr.GetClient(),
		NB:             &ovn.Reconciler{Client: nb, MaxOperations: cfg.NBMaxOperations},
		NodeName:       cfg.NodeName,
		Cluster:        cfg.ClusterConfig(),
		DefaultNetwork: cfg.DefaultNetwork(),
		Resync:         cfg.ResyncPeriod,
		MinInterval:    cfg.MinReconcileInterval,
		Metrics:        zone.NewMetrics(metrics.Registry),
		Layer2Mode:     layer2,
	}
	if cfg.NodeDataplane {
		zc.Node = nodeDataplane(cfg)
	}
	zc.Events = mgr.GetEventRecorder("ovnk-zone")
	if err := zc.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the zone controller: %w", err)
	}
	if err := leader.Setup(mgr, leader.SettingsOf(cfg)); err != nil {
		return fmt.Errorf("set up the leader controllers: %w", err)
	}
	leading := prometheus.NewGauge(prometheus.GaugeOpts{Name: "ovnk_leader", Help: "1 while this agent holds the Lease and does the cluster-wide work."})
	metrics.Registry.MustRegister(leading)
	if err := mgr.Add(leaderGauge{leading}); err != nil {
		return err
	}
	// ovsDown says why the node's Open vSwitch database is unreachable, nil while it
	// answers, or always nil when the agent does no node part.
	ovsDown := func(context.Context) error { return nil }
	if cfg.NodeDataplane {
		ovsDown = func(ctx context.Context) error { return reachable(ctx, ovsDatabase, cfg.OVSEndpoint) }
	}
	if err := mgr.Add(httpEndpoints(cfg.HTTPAddress, healthMux(zc.Ready, nbConnected, ovsDown))); err != nil {
		return err
	}
	if cfg.PprofAddress != "" {
		if err := mgr.Add(httpEndpoints(cfg.PprofAddress, pprofMux())); err != nil {
			return err
		}
	}
	if cfg.NodeDataplane {
		// The node's CNI plugin asks for the plans of the pods it wires, on the agent's
		// unix socket; the API server confirms what the cache does not know yet.
		plans := &podPlans{node: cfg.NodeName, snapshot: zc.Snapshot, cache: mgr.GetClient(), live: mgr.GetAPIReader()}
		if err := mgr.Add(planServer{socket: cfg.CNISocket, plans: plans, log: mgr.GetLogger().WithName("cni")}); err != nil {
			return err
		}
		install, err := newCNIInstall(cfg)
		if err != nil {
			return err
		}
		if install != nil {
			// The configuration only once the node can wire pods: kubelet calls the
			// node's network ready as soon as it exists.
			if err := mgr.Add(cniInstaller{install: install, ready: zc.CanWirePods, log: mgr.GetLogger().WithName("cni")}); err != nil {
				return err
			}
		}
	}
	// The manager's client reads through a cache, which would list and watch every
	// Lease; the agent may only get, create and update Leases in its namespace.
	leases, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("create the heartbeat's client: %w", err)
	}
	hb := &heartbeat.Heartbeat{
		Client:      leases,
		Namespace:   le.Namespace,
		NodeName:    cfg.NodeName,
		Version:     version.String(),
		Zone:        zc.LastReconcile,
		Leader:      func() bool { return isClosed(mgr.Elected()) },
		NBConnected: nbConnected,
		NBDown:      func(ctx context.Context) error { return nbDown(ctx, nbConnected, cfg.NBEndpoints) },
		Layer2Phase: zc.Layer2Phase,
		NodeProblem: zc.NodeProblem,
	}
	if cfg.NodeDataplane {
		// A node whose OVS database is gone shows it within a second, not at the
		// zone's next reconcile, and says why in the last error.
		hb.OVSDown = ovsDown
	}
	if err := mgr.Add(hb); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// nodeDataplane is the node's own part of the zone controller. Its clients connect on
// the first reconcile and are retried on every one after, so an agent that starts
// before OVS or the Southbound reports why (in its heartbeat) instead of exiting.
func nodeDataplane(cfg *config.Config) *host.Node {
	return &host.Node{
		Name:              cfg.NodeName,
		GatewayBridge:     cfg.GatewayBridge,
		IntegrationBridge: integrationBridge,
		DatapathType:      cfg.DatapathType,
		SBEndpoints:       cfg.SBEndpoints,
		Open: func(ctx context.Context) (*host.Clients, error) {
			flows, err := openflow.NewOFCtl(ovsRunDir(cfg.OVSEndpoint))
			if err != nil {
				return nil, fmt.Errorf("OpenFlow: %w", err)
			}
			links, err := netconf.Open("")
			if err != nil {
				return nil, fmt.Errorf("netlink: %w", err)
			}
			ovs, err := vswitch.Connect(ctx, cfg.OVSEndpoint)
			if err != nil {
				links.Close()
				return nil, err
			}
			sb, err := sbchassis.Connect(ctx, cfg.SBEndpoints)
			if err != nil {
				ovs.Close()
				links.Close()
				return nil, err
			}
			return &host.Clients{OVS: ovs, SB: sb, Links: links, Flows: flows}, nil
		},
	}
}

// integrationBridge is ovn-controller's bridge, as every OVN-Kubernetes node names it.
const integrationBridge = "br-int"

// ovsRunDir is where OVS keeps its control sockets, the bridges' OpenFlow sockets among
// them: the directory of a unix database socket, else OVS's default.
func ovsRunDir(endpoint string) string {
	if path, ok := strings.CutPrefix(endpoint, "unix:"); ok {
		return filepath.Dir(path)
	}
	return "/var/run/openvswitch"
}

// isClosed reports whether ch is closed. The manager closes Elected() once this replica
// leads, or at once when leader election is off (then this replica does the leader's
// work); a replica that loses the Lease exits.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// leaderGauge is set to 1 while this replica leads: the manager starts it only then.
type leaderGauge struct{ g prometheus.Gauge }

func (l leaderGauge) NeedLeaderElection() bool { return true }

func (l leaderGauge) Start(ctx context.Context) error {
	l.g.Set(1)
	<-ctx.Done()
	l.g.Set(0)
	return nil
}

// endpoints is the HTTP server. Every replica serves it, leader or not.
type endpoints struct {
	run func(context.Context) error
}

func (e endpoints) NeedLeaderElection() bool        { return false }
func (e endpoints) Start(ctx context.Context) error { return e.run(ctx) }

// httpEndpoints serves handler on addr until ctx ends.
func httpEndpoints(addr string, handler http.Handler) endpoints {
	return endpoints{run: func(ctx context.Context) error {
		srv := &http.Server{Addr: addr, Handler: handler, ReadHeaderTimeout: 5 * time.Second}
		errc := make(chan error, 1)
		go func() { errc <- srv.ListenAndServe() }()
		select {
		case err := <-errc:
			return fmt.Errorf("serve %s: %w", addr, err)
		case <-ctx.Done():
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(shutdown)
		}
	}}
}

// healthMux serves /healthz (the process works), /readyz (the NB is connected, the
// node's OVS database answers and the zone has been reconciled) and /metrics, and
// nothing else: every pod of the node reaches the agent's HTTP port (planServer says
// why the pods' plans are not here).
func healthMux(zoneReady, nbConnected func() bool, ovsDown func(context.Context) error) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, req *http.Request) {
		if !nbConnected() {
			http.Error(w, "not connected to the OVN northbound database", http.StatusServiceUnavailable)
			return
		}
		if err := ovsDown(req.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		if !zoneReady() {
			http.Error(w, "the zone has not been reconciled yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	return mux
}

// pprofMux serves Go's profiles under /debug/pprof/ (heap, profile, goroutine, …) on a
// mux of its own: importing net/http/pprof for its handlers, not for its registration
// on http.DefaultServeMux, which nothing here serves.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
