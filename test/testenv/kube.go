package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ovnk/ovnk/pkg/ctrlruntimelog"
	"github.com/ovnk/ovnk/pkg/localkube"
	"github.com/ovnk/ovnk/pkg/manifests"
	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// KubeVersion is the Kubernetes release whose kube-apiserver and kubectl the tests run.
// It must match KUBE_VERSION in scripts/kube-binaries.sh, which builds them into the
// cache directory that KubeBinDir computes the same way.
const KubeVersion = "1.37.1"

// KubeBinEnv names the environment variable of a directory searched first for
// kube-apiserver, kubectl and etcd (the Makefile exports the script's output there).
const KubeBinEnv = "OVNK_KUBE_BIN"

// KubeBinDir returns the directory scripts/kube-binaries.sh builds into:
// ${OVNK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ovnk}/kube-v${OVNK_KUBE_VERSION:-KubeVersion}/bin.
func KubeBinDir() string {
	root := os.Getenv("OVNK_CACHE_DIR")
	if root == "" {
		cache, err := os.UserCacheDir() // $XDG_CACHE_HOME, else $HOME/.cache, as in the script
		if err != nil {
			return ""
		}
		root = filepath.Join(cache, "ovnk")
	}
	version := os.Getenv("OVNK_KUBE_VERSION")
	if version == "" {
		version = KubeVersion
	}
	return filepath.Join(root, "kube-v"+version, "bin")
}

// findKubeBinary looks for name in $OVNK_KUBE_BIN, then the build cache, then PATH, so a
// binary built for this project wins over an older one the system happens to have (Debian
// ships a kubectl 1.32 and an etcd 3.4 that is too old, see etcdTooOld).
func findKubeBinary(name string) (string, error) {
	for _, dir := range []string{os.Getenv(KubeBinEnv), KubeBinDir()} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is neither in $%s, nor in %s, nor on PATH (build it with scripts/kube-binaries.sh)", name, KubeBinEnv, KubeBinDir())
	}
	return p, nil
}

// etcdTooOld returns why the etcd binary cannot serve kube-apiserver, or "". The API
// server's watch cache needs etcd's progress requests (etcd 3.4.31+, 3.5.13+, 3.6+);
// without them it starts, but watches fail with "Too large resource version" and no
// informer works. Debian 12's etcd is 3.4.23.
func etcdTooOld(ctx context.Context, path string) string {
	out, err := run(ctx, nil, path, "--version")
	if err != nil {
		return fmt.Sprintf("cannot tell the version of %s: %v", path, err)
	}
	m := regexp.MustCompile(`etcd Version: (\d+)\.(\d+)\.(\d+)`).FindStringSubmatch(out)
	if m == nil {
		return fmt.Sprintf("cannot tell the version of %s from %q", path, out)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	patch, _ := strconv.Atoi(m[3])
	switch {
	case major > 3, major == 3 && minor >= 6, major == 3 && minor == 5 && patch >= 13, major == 3 && minor == 4 && patch >= 31:
		return ""
	}
	return fmt.Sprintf("etcd %s.%s.%s at %s is too old for kube-apiserver %s (watches fail without progress requests: need 3.4.31+, 3.5.13+ or 3.6+); scripts/kube-binaries.sh builds the etcd release Kubernetes pins",
		m[1], m[2], m[3], path, KubeVersion)
}

// Kube is an etcd and a kube-apiserver listening on loopback, with the k8s.ovn.org CRDs
// installed and established. There is no controller-manager or scheduler: objects are
// stored and validated, but nothing acts on them (a deleted namespace stays Terminating,
// a pod stays Pending). The ServiceAccount admission plugin is off, so pods can be created
// without the "default" service account that the controller-manager would make.
type Kube struct {
	// Dir holds the certificates, the kubeconfig, etcd's data and the servers' logs.
	Dir string
	// Kubeconfig is a kubeconfig file for an admin (group system:masters) with the
	// credentials embedded; it works with client-go and with the real kubectl.
	Kubeconfig string
	// RESTConfig is built from Kubeconfig; it is shared, so copy it (rest.CopyConfig)
	// before changing it. Its rate limits are raised so tests are never throttled.
	RESTConfig *rest.Config
	// Client is a clientset for RESTConfig.
	Client kubernetes.Interface
	// KubectlPath is the kubectl binary Kubectl runs.
	KubectlPath string
	// StartupTime is how long starting etcd and kube-apiserver and installing the CRDs took.
	StartupTime time.Duration

	etcd, apiserver *Process
}

// shared is the package's one Kube. It is started lazily, by the first SharedKube call,
// rather than in KubeMain: `go test -run FRR` and the many tests that need no API server
// then do not pay its start (about 3s here, more while something else builds) or the
// memory of a kube-apiserver. KubeMain only enables it and stops whatever was started.
var shared struct {
	sync.Mutex
	once    sync.Once
	enabled bool
	kube    *Kube
	missing string // a component is not installed: skip (or fail under OVNK_REQUIRE_ALL)
	err     error  // the components are there but did not start: always a failure
}

// KubeMain runs the package's tests with a shared API server available through
// SharedKube, and stops it and removes its directory (and the binaries Command built)
// when they are done:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }
//
// If the test binary dies (a panic, a timeout), the servers die with it (Pdeathsig); their
// temporary directory is left behind until the next start removes it.
//
// Tests' controller-runtime clients log nothing (ctrlruntimelog.Discard), as the plugin's
// do; a package that wants their logs sets its logger before calling KubeMain (the
// first one set is kept).
func KubeMain(m *testing.M) int {
	ctrlruntimelog.Discard()
	shared.Lock()
	shared.enabled = true
	shared.Unlock()
	defer func() {
		shared.Lock()
		defer shared.Unlock()
		if shared.kube != nil {
			shared.kube.stop()
		}
	}()
	defer RemoveBuilds()
	return m.Run()
}

// SharedKube returns the API server of the test package, starting it on first use. The
// servers and CRDs are shared by all tests of the package, so each test should work in
// its own namespace (see Namespace) or with uniquely named cluster-scoped objects. A
// missing binary ends the test through Missing; a failure to start fails it with the
// server's log.
func SharedKube(t testing.TB) *Kube {
	t.Helper()
	shared.Lock()
	enabled := shared.enabled
	shared.Unlock()
	if !enabled {
		t.Fatalf("testenv.SharedKube needs the package's TestMain to run testenv.KubeMain, which stops the servers")
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		k, missing, err := startKube(ctx)
		if err != nil && k != nil {
			k.stop() // what did start; the error already holds the logs
			k = nil
		}
		shared.Lock()
		shared.kube, shared.missing, shared.err = k, missing, err
		shared.Unlock()
	})
	switch {
	case shared.missing != "":
		Missing(t, "%s", shared.missing)
	case shared.err != nil:
		t.Fatalf("%v", shared.err)
	}
	return shared.kube
}

// startKube starts etcd and kube-apiserver in a new temporary directory. A non-empty
// missing names a component that is not installed. On error the returned Kube (if any)
// holds what was started, for the caller to stop.
func startKube(ctx context.Context) (k *Kube, missing string, err error) {
	begin := time.Now()
	paths := map[string]string{}
	var absent []string
	for _, name := range []string{"etcd", "kube-apiserver", "kubectl"} {
		p, err := findKubeBinary(name)
		if err != nil {
			absent = append(absent, err.Error())
			continue
		}
		paths[name] = p
	}
	if len(absent) > 0 {
		return nil, strings.Join(absent, "; "), nil
	}
	if reason := etcdTooOld(ctx, paths["etcd"]); reason != "" {
		return nil, reason, nil
	}
	removeStaleKubeDirs()
	dir, err := os.MkdirTemp("", kubeDirPrefix)
	if err != nil {
		return nil, "", fmt.Errorf("create directory for kube-apiserver: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, "", fmt.Errorf("write %s: %w", filepath.Join(dir, ownerFile), err)
	}
	k = &Kube{Dir: dir, KubectlPath: paths["kubectl"], Kubeconfig: filepath.Join(dir, "kubeconfig")}
	pki, err := localkube.WritePKI(dir, controlPlaneName, certValidity)
	if err != nil {
		return k, "", err
	}
	etcdURL, err := k.startEtcd(ctx, paths["etcd"])
	if err != nil {
		return k, "", err
	}
	port, err := k.startAPIServer(ctx, paths["kube-apiserver"], etcdURL, pki)
	if err != nil {
		return k, "", err
	}
	if err := pki.WriteKubeconfig(k.Kubeconfig, "https://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), controlPlaneName); err != nil {
		return k, "", err
	}
	if k.RESTConfig, err = clientcmd.BuildConfigFromFlags("", k.Kubeconfig); err != nil {
		return k, "", fmt.Errorf("load kubeconfig %s: %w", k.Kubeconfig, err)
	}
	k.RESTConfig.QPS, k.RESTConfig.Burst = 1000, 2000
	if k.Client, err = kubernetes.NewForConfig(k.RESTConfig); err != nil {
		return k, "", fmt.Errorf("clientset for %s: %w", k.Kubeconfig, err)
	}
	if err := k.waitReady(ctx); err != nil {
		return k, "", err
	}
	if err := k.installCRDs(ctx); err != nil {
		return k, "", err
	}
	k.StartupTime = time.Since(begin)
	return k, "", nil
}

// controlPlaneName names the test cluster's CA and admin (NAME-ca, NAME-admin) and its
// kubeconfig's cluster, user and context.
const controlPlaneName = "ovnk-test"

// certValidity outlasts any test run: the certificates are made anew for each.
const certValidity = 24 * time.Hour

const (
	kubeDirPrefix = "ovnk-kube-"
	ownerFile     = "owner.pid" // the test binary that created the directory
)

// removeStaleKubeDirs removes the directories of test binaries that died without
// KubeMain's cleanup (a panic, a timeout, a kill): their servers died with them, but
// etcd's data would pile up in the temporary directory.
func removeStaleKubeDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), kubeDirPrefix+"*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being created
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(dir)
		}
	}
}

// stop stops the API server before etcd (so it does not log etcd's disappearance as an
// error) and removes the directory.
func (k *Kube) stop() {
	if k.apiserver != nil {
		k.apiserver.Stop()
	}
	if k.etcd != nil {
		k.etcd.Stop()
	}
	if err := os.RemoveAll(k.Dir); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: remove %s: %v\n", k.Dir, err)
	}
}

// portTaken reports whether a server that exited did so because its port was in use.
func portTaken(p *Process) bool {
	done, _ := p.Exited()
	return done && procutil.PortTaken(p.LogPath)
}

// startEtcd starts a single-member etcd on two free loopback ports (clients, peers) and
// returns its client URL once it reports itself healthy.
func (k *Kube) startEtcd(ctx context.Context, path string) (string, error) {
	for attempt := 1; ; attempt++ {
		clientPort, err := procutil.FreePort()
		if err != nil {
			return "", err
		}
		peerPort, err := procutil.FreePort()
		if err != nil {
			return "", err
		}
		clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
		dataDir := filepath.Join(k.Dir, "etcd-"+strconv.Itoa(attempt))
		p, err := startProcess(k.Dir, "etcd", nil, append([]string{path}, localkube.EtcdArgs("ovnk", dataDir, clientURL, peerURL)...)...)
		if err != nil {
			return "", fmt.Errorf("etcd: %w", err)
		}
		k.etcd = p
		err = waitRunning(ctx, p, 30*time.Second, "etcd at "+clientURL+" to be healthy", poll.HTTPOK(clientURL+"/health"))
		if err == nil {
			return clientURL, nil
		}
		if portTaken(p) && attempt < procutil.StartAttempts {
			continue
		}
		p.Stop()
		return "", fmt.Errorf("start etcd: %w\netcd log:\n%s", err, p.LogTail(30))
	}
}

// startAPIServer starts kube-apiserver on a free loopback port and returns the port. It
// does not wait for readiness (waitReady does, with the admin client).
func (k *Kube) startAPIServer(ctx context.Context, path, etcdURL string, pki *localkube.PKI) (int, error) {
	for attempt := 1; ; attempt++ {
		port, err := procutil.FreePort()
		if err != nil {
			return 0, err
		}
		argv := append([]string{path}, localkube.APIServerArgs(etcdURL, port, filepath.Join(k.Dir, "apiserver-certs"), pki)...)
		p, err := startProcess(k.Dir, "kube-apiserver", nil, argv...)
		if err != nil {
			return 0, fmt.Errorf("kube-apiserver: %w", err)
		}
		k.apiserver = p
		// Wait only until it listens: the readiness wait comes after the kubeconfig
		// exists, and a bind failure shows up here as an early exit.
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		err = waitRunning(ctx, p, 90*time.Second, "kube-apiserver to listen on "+addr, poll.Dials("tcp", addr))
		if err == nil {
			return port, nil
		}
		if portTaken(p) && attempt < procutil.StartAttempts {
			continue
		}
		p.Stop()
		return 0, k.apiserverError(err)
	}
}

func (k *Kube) apiserverError(err error) error {
	return fmt.Errorf("start kube-apiserver: %w\nkube-apiserver log:\n%s", err, k.apiserver.LogTail(40))
}

// waitReady polls /readyz, whose verbose form names the checks still failing.
func (k *Kube) waitReady(ctx context.Context) error {
	err := waitRunning(ctx, k.apiserver, 90*time.Second, "kube-apiserver /readyz", func(ctx context.Context) error {
		return localkube.Ready(ctx, k.Client)
	})
	if err != nil {
		return k.apiserverError(err)
	}
	return nil
}

// installCRDs creates the k8s.ovn.org CRDs from pkg/manifests, waits until each is
// Established, and lists each kind once. The first list of a kind waits about a second
// for the API server's new watch cache; paying that here, all kinds at once, keeps it
// out of the tests (and shows the kinds are really served).
func (k *Kube) installCRDs(ctx context.Context) error {
	if err := localkube.InstallCRDs(ctx, k.RESTConfig, 30*time.Second); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	crds, err := manifests.CRDs()
	if err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	dyn, err := dynamic.NewForConfig(k.RESTConfig)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	errs := make([]error, len(crds))
	var wg sync.WaitGroup
	for i, crd := range crds {
		wg.Go(func() {
			for _, v := range crd.Spec.Versions {
				if !v.Served {
					continue
				}
				gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
				if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
					errs[i] = fmt.Errorf("list %s of CRD %s: %w", gvr, crd.Name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Env returns the environment for a program that should talk to this API server the way
// a user's kubectl would: KUBECONFIG, and kubectl's discovery cache inside Dir instead of
// the user's home.
func (k *Kube) Env() []string {
	return []string{"KUBECONFIG=" + k.Kubeconfig, "KUBECACHEDIR=" + filepath.Join(k.Dir, "kubectl-cache")}
}

// Kubectl runs the real kubectl binary against this API server and returns its standard
// output. The kubeconfig comes from the environment (Env), not a flag, because kubectl
// refuses flags before a plugin name (`kubectl ovnk …`).
func (k *Kube) Kubectl(ctx context.Context, args ...string) (string, error) {
	return run(ctx, k.Env(), append([]string{k.KubectlPath}, args...)...)
}

// ConfigAs returns a copy of RESTConfig that impersonates user and groups, for checking
// what RBAC grants them (e.g. "system:serviceaccount:NS:NAME" with group
// "system:serviceaccounts"); the admin may impersonate anyone.
func (k *Kube) ConfigAs(user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(k.RESTConfig)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return c
}

var nonDNS = regexp.MustCompile(`[^a-z0-9]+`)

// Namespace creates a namespace named after the test with a random suffix and deletes it
// in t.Cleanup. With no controller-manager the deletion leaves it Terminating with its
// contents; the names are never reused, and KubeMain discards everything at the end.
func (k *Kube) Namespace(t testing.TB) string {
	t.Helper()
	prefix := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := k.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: prefix + "-",
			Annotations:  map[string]string{"ovnk.test/name": t.Name()},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace for %s: %v", t.Name(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := k.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// KubeBinary returns the path of etcd, kube-apiserver or kubectl as the tests find it
// ($OVNK_KUBE_BIN, the build cache, PATH); a missing one ends the test through Missing.
func KubeBinary(t testing.TB, name string) string {
	t.Helper()
	p, err := findKubeBinary(name)
	if err != nil {
		Missing(t, "%v", err)
	}
	return p
}
