// Package localkube is what it takes to run a Kubernetes control plane on loopback: etcd
// and kube-apiserver alone, as the tests of test/testenv do, or with a
// kube-controller-manager and a kube-scheduler for the kubelets of the demo sandbox
// (pkg/sandbox): the certificates and the admin's kubeconfig, the servers' command
// lines, the wait for readiness and the CRDs. Running the processes is the
// caller's: the sandbox's outlive the command that starts them, the tests' die with the
// test binary.
package localkube

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/poll"
)

// PKI names the files kube-apiserver is started with, and holds the PEM the admin's
// kubeconfig embeds.
type PKI struct {
	CACert, ServingCert, ServingKey, SAPublic, SAPrivate string
	// AdminCert and AdminKey are the admin's client certificate and key as files: the
	// API server presents them to kubelets (kubelet authorizes them through the API
	// server, where system:masters may do anything).
	AdminCert, AdminKey              string
	CAPEM, AdminCertPEM, AdminKeyPEM []byte
}

// WritePKI creates, in dir, a CA (NAME-ca), a serving certificate for the loopback
// addresses and the cluster's "kubernetes" service, an admin client certificate
// (NAME-admin in group system:masters, which RBAC lets do anything) and the
// service-account signing key pair. The certificates are valid for validity; keys are
// ECDSA P-256, quick to generate.
func WritePKI(dir, name string, validity time.Duration) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name + "-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	issue := func(serial int64, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, fmt.Errorf("generate key for %s: %w", tmpl.Subject.CommonName, err)
		}
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(validity)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, fmt.Errorf("create certificate for %s: %w", tmpl.Subject.CommonName, err)
		}
		keyPEM, err = encodeKey(key)
		if err != nil {
			return nil, nil, fmt.Errorf("encode key of %s: %w", tmpl.Subject.CommonName, err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
	}
	servingCert, servingKey, err := issue(2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// 10.96.0.1 is the "kubernetes" service's address in ServiceCIDR.
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 96, 0, 1)},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return nil, err
	}
	adminCert, adminKey, err := issue(3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: name + "-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate service-account signing key: %w", err)
	}
	saPrivate, err := encodeKey(saKey)
	if err != nil {
		return nil, fmt.Errorf("encode service-account signing key: %w", err)
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("encode service-account public key: %w", err)
	}

	p := &PKI{
		CACert:       filepath.Join(dir, "ca.crt"),
		ServingCert:  filepath.Join(dir, "apiserver.crt"),
		ServingKey:   filepath.Join(dir, "apiserver.key"),
		SAPublic:     filepath.Join(dir, "sa.pub"),
		SAPrivate:    filepath.Join(dir, "sa.key"),
		AdminCert:    filepath.Join(dir, "admin.crt"),
		AdminKey:     filepath.Join(dir, "admin.key"),
		CAPEM:        pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		AdminCertPEM: adminCert,
		AdminKeyPEM:  adminKey,
	}
	files := map[string][]byte{
		p.CACert:      p.CAPEM,
		p.ServingCert: servingCert,
		p.ServingKey:  servingKey,
		p.SAPublic:    pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
		p.SAPrivate:   saPrivate,
		p.AdminCert:   adminCert,
		p.AdminKey:    adminKey,
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return p, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// WriteKubeconfig writes the admin's kubeconfig for server, its cluster, user and
// context all called name, with the credentials embedded so that it keeps working when
// copied elsewhere.
func (p *PKI) WriteKubeconfig(path, server, name string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.CAPEM}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: p.AdminCertPEM, ClientKeyData: p.AdminKeyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// EtcdArgs are the flags of a single-member etcd called name that serves clients on
// clientURL and keeps its data in dataDir, logging to standard error.
func EtcdArgs(name, dataDir, clientURL, peerURL string) []string {
	return []string{
		"--name=" + name,
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=" + name + "=" + peerURL,
		"--logger=zap",
		"--log-outputs=stderr",
	}
}

// ServiceCIDR is the cluster's service address range.
const ServiceCIDR = "10.96.0.0/16"

// APIServerArgs are the flags of a kube-apiserver on 127.0.0.1:port that stores in etcd
// at etcdURL and serves with the certificates of p, for an API server alone: with no
// controller-manager, the ServiceAccount admission plugin is off (the "default"
// ServiceAccount would never appear, and the plugin would refuse every pod). certDir is
// where it would write certificates of its own: it does not, as p gives them, but the
// default is /var/run/kubernetes.
func APIServerArgs(etcdURL string, port int, certDir string, p *PKI) []string {
	return append(apiServerArgs(etcdURL, port, certDir, p), "--disable-admission-plugins=ServiceAccount")
}

// ClusterAPIServerArgs are APIServerArgs for a whole cluster: a controller-manager runs
// (so ServiceAccount admission stays on), kubelets serve exec, logs and port-forward
// (the API server presents the admin's certificate to them), and the API server reaches
// nodes and pods through the HTTP CONNECT proxy of egressSelectorConfig
// (WriteEgressSelectorConfig), since they live in network namespaces of their own.
func ClusterAPIServerArgs(etcdURL string, port int, certDir string, p *PKI, egressSelectorConfig string) []string {
	return append(apiServerArgs(etcdURL, port, certDir, p),
		"--kubelet-client-certificate="+p.AdminCert,
		"--kubelet-client-key="+p.AdminKey,
		// Nodes are reached by their addresses, as kubeadm clusters do: the proxy
		// routes addresses, and node names resolve nowhere here.
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--egress-selector-config-file="+egressSelectorConfig,
	)
}

func apiServerArgs(etcdURL string, port int, certDir string, p *PKI) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
		"--tls-cert-file=" + p.ServingCert,
		"--tls-private-key-file=" + p.ServingKey,
		"--client-ca-file=" + p.CACert,
		"--authorization-mode=RBAC",
		// The agent's DaemonSet is privileged, as every real cluster (kubeadm, kind)
		// allows, and `kubectl ovnk install` creates it.
		"--allow-privileged=true",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.SAPublic,
		"--service-account-signing-key-file=" + p.SAPrivate,
		"--service-cluster-ip-range=" + ServiceCIDR,
		// Nothing here needs them, and each costs start time or background writes.
		"--enable-priority-and-fairness=false",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
}

// WriteEgressSelectorConfig writes the API server's egress selector configuration: its
// connections to the cluster (kubelets, pods) go through the HTTP CONNECT proxy on the
// unix socket proxySocket; those to etcd and its own control plane go directly.
func WriteEgressSelectorConfig(path, proxySocket string) error {
	cfg := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, proxySocket)
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("write egress selector configuration: %w", err)
	}
	return nil
}

// ControllerManagerArgs are the flags of a kube-controller-manager that reaches the
// API server with kubeconfig and signs ServiceAccount tokens with p's key: it creates
// each namespace's default ServiceAccount and kube-root-ca.crt ConfigMap (without them
// no pod starts), and runs the DaemonSet, ReplicaSet, Deployment, namespace, garbage
// collector and node lifecycle controllers.
func ControllerManagerArgs(kubeconfig string, p *PKI) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--service-account-private-key-file=" + p.SAPrivate,
		"--root-ca-file=" + p.CACert,
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--profiling=false",
		// No cloud, no node CIDR allocation: the network plugin allocates.
		"--allocate-node-cidrs=false",
		"--controllers=*,-bootstrapsigner,-tokencleaner,-csrsigning,-csrapproving,-csrcleaner",
	}
}

// SchedulerArgs are the flags of a kube-scheduler that reaches the API server with
// kubeconfig.
func SchedulerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--profiling=false",
	}
}

// Ready asks kube-apiserver's /readyz; while it is not ready, the error names the
// checks that still fail.
func Ready(ctx context.Context, c kubernetes.Interface) error {
	body, err := c.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "").DoRaw(ctx)
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

// InstallCRDs creates the k8s.ovn.org CRDs of pkg/manifests and its shared ones (the
// NetworkAttachmentDefinition's), keeping those that exist already, and waits up to
// timeout for each to be established.
func InstallCRDs(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	crds, err := manifests.CRDs()
	if err != nil {
		return err
	}
	shared, err := manifests.SharedCRDs()
	if err != nil {
		return err
	}
	crds = append(crds, shared...)
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
		err := poll.Until(ctx, timeout, "CRD "+crd.Name+" to be established", func(ctx context.Context) error {
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
