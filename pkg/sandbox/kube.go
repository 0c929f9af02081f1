package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ovnk/ovnk/pkg/localkube"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// controlPlaneName names the sandbox's control plane: its etcd member, its CA and admin
// (NAME-ca, NAME-admin), and the cluster, user and context of its kubeconfig.
const controlPlaneName = "ovnk-sandbox"

// certValidity is how long the sandbox's certificates last: a sandbox left running
// for weeks keeps working.
const certValidity = 365 * 24 * time.Hour

func (s *Sandbox) etcd() *daemon      { return daemonAt(s.Dir, "etcd", "etcd") }
func (s *Sandbox) apiserver() *daemon { return daemonAt(s.Dir, "kube-apiserver", "kube-apiserver") }
func (s *Sandbox) controllerManager() *daemon {
	return daemonAt(s.Dir, "kube-controller-manager", "kube-controller-manager")
}
func (s *Sandbox) scheduler() *daemon { return daemonAt(s.Dir, "kube-scheduler", "kube-scheduler") }

// proxySocket is the forwarder's CONNECT proxy, through which the API server reaches
// the kubelets and pods inside the nodes.
func (s *Sandbox) proxySocket() string { return filepath.Join(s.Dir, "proxy.sock") }

// startEtcd starts a single-member etcd on two free loopback ports and waits until it
// reports itself healthy.
func (s *Sandbox) startEtcd(ctx context.Context, path string) error {
	return retryOnPortClash(func() (*daemon, error) {
		clientPort, err := procutil.FreePort()
		if err != nil {
			return nil, err
		}
		peerPort, err := procutil.FreePort()
		if err != nil {
			return nil, err
		}
		s.EtcdURL = fmt.Sprintf("http://127.0.0.1:%d", clientPort)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
		// An attempt that failed may have initialised the data for other peer URLs.
		dataDir := filepath.Join(s.Dir, "etcd")
		if err := os.RemoveAll(dataDir); err != nil {
			return nil, fmt.Errorf("clear etcd data: %w", err)
		}
		d := s.etcd()
		argv := append([]string{path}, localkube.EtcdArgs(controlPlaneName, dataDir, s.EtcdURL, peerURL)...)
		if err := d.startDetached(s.Dir, nil, argv...); err != nil {
			return nil, err
		}
		return d, waitStarted(ctx, d, etcdTimeout, "etcd at "+s.EtcdURL+" to be healthy", poll.HTTPOK(s.EtcdURL+"/health"))
	})
}

// startAPIServer starts kube-apiserver on a free loopback port, writes the admin
// kubeconfig, and waits until /readyz answers.
func (s *Sandbox) startAPIServer(ctx context.Context, path string) error {
	certs, err := localkube.WritePKI(filepath.Join(s.Dir, "pki"), controlPlaneName, certValidity)
	if err != nil {
		return err
	}
	egress := filepath.Join(s.Dir, "egress-selector.yaml")
	if err := localkube.WriteEgressSelectorConfig(egress, s.proxySocket()); err != nil {
		return err
	}
	var d *daemon
	err = retryOnPortClash(func() (*daemon, error) {
		port, err := procutil.FreePort()
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s.APIServer = "https://" + addr
		d = s.apiserver()
		argv := append([]string{path}, localkube.ClusterAPIServerArgs(s.EtcdURL, port, filepath.Join(s.Dir, "pki", "apiserver"), certs, egress)...)
		if err := d.startDetached(s.Dir, nil, argv...); err != nil {
			return nil, err
		}
		// A bind failure shows up as an early exit while waiting for the port.
		return d, waitStarted(ctx, d, apiserverTimeout, "kube-apiserver to listen on "+addr, poll.Dials("tcp", addr))
	})
	if err != nil {
		return err
	}
	if err := certs.WriteKubeconfig(s.Kubeconfig, s.APIServer, controlPlaneName); err != nil {
		return err
	}
	// Inside a node the API server is at the node's own 127.0.0.1:6443 (the forwarder),
	// which the serving certificate covers.
	for _, n := range s.Nodes {
		if err := os.MkdirAll(s.nodeDir(n), 0o755); err != nil {
			return fmt.Errorf("create directory of node %s: %w", n.Name, err)
		}
		if err := certs.WriteKubeconfig(n.Kubeconfig, "https://"+nodeAPIServer, controlPlaneName); err != nil {
			return err
		}
	}
	cfg, err := s.restConfig()
	if err != nil {
		return err
	}
	return waitStarted(ctx, d, apiserverTimeout, "kube-apiserver /readyz", apiserverReady(cfg))
}

// startControllers starts kube-controller-manager and kube-scheduler and waits until
// the controller-manager has done what pods need before they can start: the default
// namespace's ServiceAccount.
func (s *Sandbox) startControllers(ctx context.Context, bins binaries) error {
	pki := &localkube.PKI{CACert: filepath.Join(s.Dir, "pki", "ca.crt"), SAPrivate: filepath.Join(s.Dir, "pki", "sa.key")}
	kcm, sched := s.controllerManager(), s.scheduler()
	if err := kcm.startDetached(s.Dir, nil, append([]string{bins.controllerManager}, localkube.ControllerManagerArgs(s.Kubeconfig, pki)...)...); err != nil {
		return err
	}
	if err := sched.startDetached(s.Dir, nil, append([]string{bins.scheduler}, localkube.SchedulerArgs(s.Kubeconfig)...)...); err != nil {
		return err
	}
	cfg, err := s.restConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	return waitStarted(ctx, kcm, apiserverTimeout, "kube-controller-manager to create the default ServiceAccount", func(ctx context.Context) error {
		if err := sched.exitedEarly(); err != nil {
			return poll.Stop(err)
		}
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// restConfig is the admin's client configuration.
func (s *Sandbox) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", s.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// apiserverReady asks /readyz, whose verbose answer names the checks still failing.
func apiserverReady(cfg *rest.Config) func(context.Context) error {
	return func(ctx context.Context) error {
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		return localkube.Ready(ctx, client)
	}
}

// createClusterObjects installs the CRDs and waits until they are served. The Nodes are
// the kubelets' to register.
func (s *Sandbox) createClusterObjects(ctx context.Context) error {
	cfg, err := s.restConfig()
	if err != nil {
		return err
	}
	if err := localkube.InstallCRDs(ctx, cfg, apiserverTimeout); err != nil {
		return err
	}
	return nil
}
