package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ovnk/ovnk/pkg/manifests"
)

func (s *Sandbox) etcd() *daemon      { return daemonAt(s.Dir, "etcd", "etcd") }
func (s *Sandbox) apiserver() *daemon { return daemonAt(s.Dir, "kube-apiserver", "kube-apiserver") }

// startEtcd starts a single-member etcd on two free loopback ports and waits until it
// reports itself healthy.
func (s *Sandbox) startEtcd(ctx context.Context, path string) error {
	return retryOnPortClash(func() (*daemon, error) {
		clientPort, err := freePort()
		if err != nil {
			return nil, err
		}
		peerPort, err := freePort()
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
		if err := d.startDetached(s.Dir, nil, path,
			"--name=ovnk-sandbox",
			"--data-dir="+dataDir,
			"--listen-client-urls="+s.EtcdURL,
			"--advertise-client-urls="+s.EtcdURL,
			"--listen-peer-urls="+peerURL,
			"--initial-advertise-peer-urls="+peerURL,
			"--initial-cluster=ovnk-sandbox="+peerURL,
			"--logger=zap",
			"--log-outputs=stderr",
		); err != nil {
			return nil, err
		}
		return d, waitStarted(ctx, d, etcdTimeout, "etcd at "+s.EtcdURL+" to be healthy", httpOK(s.EtcdURL+"/health"))
	})
}

// startAPIServer starts kube-apiserver on a free loopback port, writes the admin
// kubeconfig, and waits until /readyz answers.
func (s *Sandbox) startAPIServer(ctx context.Context, path string) error {
	certs, err := writePKI(filepath.Join(s.Dir, "pki"))
	if err != nil {
		return err
	}
	var d *daemon
	err = retryOnPortClash(func() (*daemon, error) {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s.APIServer = "https://" + addr
		d = s.apiserver()
		if err := d.startDetached(s.Dir, nil, path,
			"--etcd-servers="+s.EtcdURL,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port="+strconv.Itoa(port),
			"--cert-dir="+filepath.Join(s.Dir, "pki", "apiserver"), // unused, but not /var/run/kubernetes
			"--tls-cert-file="+certs.servingCert,
			"--tls-private-key-file="+certs.servingKey,
			"--client-ca-file="+certs.caCert,
			"--authorization-mode=RBAC",
			"--allow-privileged=true", // `kubectl ovnk install` creates a privileged DaemonSet
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file="+certs.saPublic,
			"--service-account-signing-key-file="+certs.saPrivate,
			"--service-cluster-ip-range=10.96.0.0/16",
			// With no controller-manager the "default" ServiceAccount never appears, and
			// this admission plugin would then refuse every pod.
			"--disable-admission-plugins=ServiceAccount",
			// Nothing here needs them, and each costs start time or background writes.
			"--enable-priority-and-fairness=false",
			"--endpoint-reconciler-type=none",
			"--profiling=false",
		); err != nil {
			return nil, err
		}
		// A bind failure shows up as an early exit while waiting for the port.
		return d, waitStarted(ctx, d, apiserverTimeout, "kube-apiserver to listen on "+addr, tcpAccepts(addr))
	})
	if err != nil {
		return err
	}
	if err := writeKubeconfig(s.Kubeconfig, s.APIServer, certs); err != nil {
		return err
	}
	cfg, err := s.restConfig()
	if err != nil {
		return err
	}
	return waitStarted(ctx, d, apiserverTimeout, "kube-apiserver /readyz", apiserverReady(cfg))
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
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "").DoRaw(ctx)
		if err == nil {
			return nil
		}
		var failed []string
		for _, line := range strings.Split(string(body), "\n") {
			if name, ok := strings.CutPrefix(line, "[-]"); ok {
				failed = append(failed, strings.TrimSuffix(name, " failed: reason withheld"))
			}
		}
		if len(failed) == 0 {
			return err
		}
		return fmt.Errorf("/readyz: failing checks %s", strings.Join(failed, ", "))
	}
}

// createClusterObjects installs the CRDs and waits until they are served, then creates
// the agents' namespace (for their leader Lease) and the Nodes.
func (s *Sandbox) createClusterObjects(ctx context.Context) error {
	cfg, err := s.restConfig()
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, cfg); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: manifests.DefaultNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns.Name, err)
	}
	for i, n := range s.Nodes {
		obj, err := n.object(i)
		if err != nil {
			return err
		}
		if _, err := client.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
	}
	return nil
}

// installCRDs creates the k8s.ovn.org CRDs and waits until each is established.
func installCRDs(ctx context.Context, cfg *rest.Config) error {
	crds, err := manifests.CRDs()
	if err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("apiextensions client: %w", err)
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if _, err := api.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range crds {
		err := poll(ctx, apiserverTimeout, "CRD "+crd.Name+" to be established", func(ctx context.Context) error {
			got, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("CRD %s is not established yet", crd.Name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
