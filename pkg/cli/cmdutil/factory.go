// Package cmdutil is what every `kubectl ovnk` command shares: the connection to the
// cluster (kubectl's flags), the plugin's own settings, output formats and the terminal
// (colour, width, a progress line). Commands receive one Factory and ask it for what
// they need, so a test can point a whole command tree at a test API server.
package cmdutil

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// Factory gives commands their clients, settings and terminal.
type Factory struct {
	genericiooptions.IOStreams
	// Kube are kubectl's connection flags (--kubeconfig, --context, -n, --as, …).
	Kube *genericclioptions.ConfigFlags
	// Settings are the plugin's own defaults: config file, OVNK_* and flags.
	Settings *Settings
	// Getenv reads the environment (NO_COLOR, COLUMNS); tests replace it.
	Getenv func(string) string
	// IsTerminal reports whether a stream is a terminal; tests replace it.
	IsTerminal func(any) bool
	// TerminalWidth is the width of a terminal stream, 0 when unknown.
	TerminalWidth func(any) int
}

// Scheme holds the types the plugin reads and writes: Kubernetes' own, k8s.ovn.org's,
// and the NetworkAttachmentDefinitions where upstream OVN-Kubernetes keeps networks' ids.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := ovnkv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := nadv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// RESTConfig is the API server connection kubectl's flags and kubeconfig describe.
func (f *Factory) RESTConfig() (*rest.Config, error) {
	if err := f.noCluster(); err != nil {
		return nil, err
	}
	rc, err := f.Kube.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, noClusterError("the kubeconfig is empty")
		}
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return rc, nil
}

// noClusterError is the one line for "nothing names a cluster", saying why and what to do.
func noClusterError(why string) error {
	return fmt.Errorf("no cluster to talk to: %s: set KUBECONFIG or pass --kubeconfig to name a kubeconfig file, or --context to choose one of its contexts (for the local sandbox, run `make demo` and use the KUBECONFIG line it prints)", why)
}

// noCluster refuses what client-go would otherwise quietly turn into its default server,
// http://localhost:8080: no --server, --context or --cluster; a kubeconfig (KUBECONFIG,
// --kubeconfig or ~/.kube/config) that is missing, sets no current context, or whose
// current context names no cluster it defines; and no pod around the process
// (KUBERNETES_SERVICE_HOST unset), where client-go would use the service account.
// Anything else, including errors reading the kubeconfig, is left to client-go.
func (f *Factory) noCluster() error {
	if f.Kube == nil {
		return nil
	}
	for _, flag := range []*string{f.Kube.APIServer, f.Kube.Context, f.Kube.ClusterName} {
		if flag != nil && *flag != "" {
			return nil
		}
	}
	// client-go's other ways to a server: the pod's (in-cluster) and the deprecated
	// KUBERNETES_MASTER, which replaces localhost:8080.
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" || os.Getenv("KUBERNETES_MASTER") != "" {
		return nil
	}
	loader := f.Kube.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil
	}
	files := kubeconfigFiles(loader.ConfigAccess())
	switch ctx, ok := raw.Contexts[raw.CurrentContext]; {
	case len(files.found) == 0:
		return noClusterError(fmt.Sprintf("there is no kubeconfig file (looked for %s)", orNothing(files.looked)))
	case raw.CurrentContext == "":
		return noClusterError(fmt.Sprintf("kubeconfig %s sets no current context", strings.Join(files.found, ", ")))
	case !ok:
		return nil // client-go names the missing context
	case raw.Clusters[ctx.Cluster] == nil:
		return noClusterError(fmt.Sprintf("context %s of kubeconfig %s names cluster %q, which it does not define", raw.CurrentContext, strings.Join(files.found, ", "), ctx.Cluster))
	}
	return nil
}

// kubeconfigFiles are the kubeconfig files client-go reads, in order, and those of them
// that exist.
func kubeconfigFiles(access clientcmd.ConfigAccess) (files struct{ looked, found []string }) {
	if access == nil {
		return files
	}
	for _, path := range access.GetLoadingPrecedence() {
		if path == "" {
			continue
		}
		files.looked = append(files.looked, path)
		if _, err := os.Stat(path); err == nil {
			files.found = append(files.found, path)
		}
	}
	return files
}

func orNothing(paths []string) string {
	if len(paths) == 0 {
		return "none: KUBECONFIG is empty and there is no home directory"
	}
	return strings.Join(paths, ", ")
}

// Client is a controller-runtime client for core and k8s.ovn.org objects.
func (f *Factory) Client() (client.Client, error) {
	rc, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	return newClient(rc)
}

// Clientset is a client-go clientset, for what controller-runtime does not do (exec,
// discovery, events).
func (f *Factory) Clientset() (kubernetes.Interface, error) {
	rc, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	return newClientset(rc)
}

// Connection is a command's link to the API server: both kinds of client, built from
// one REST config, which also names the server in errors about reaching it.
type Connection struct {
	Config    *rest.Config
	Client    client.Client
	Clientset kubernetes.Interface
}

// Connect builds the clients of the cluster kubectl's flags name. Neither contacts the
// server yet.
func (f *Factory) Connect() (*Connection, error) {
	rc, err := f.RESTConfig()
	if err != nil {
		return nil, err
	}
	c, err := newClient(rc)
	if err != nil {
		return nil, err
	}
	cs, err := newClientset(rc)
	if err != nil {
		return nil, err
	}
	return &Connection{Config: rc, Client: c, Clientset: cs}, nil
}

// Host is the API server's address.
func (c *Connection) Host() string { return c.Config.Host }

// Explain is ExplainConnectionError for this connection's API server.
func (c *Connection) Explain(err error) error { return ExplainConnectionError(c.Config.Host, err) }

func newClient(rc *rest.Config) (client.Client, error) {
	c, err := client.New(rc, client.Options{Scheme: Scheme})
	if err != nil {
		return nil, ExplainConnectionError(rc.Host, err)
	}
	return c, nil
}

func newClientset(rc *rest.Config) (kubernetes.Interface, error) {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("create a client for %s: %w", rc.Host, err)
	}
	return cs, nil
}

// Namespace is the namespace of -n, else the kubeconfig context's, else "default";
// explicit says whether the user chose it.
func (f *Factory) Namespace() (ns string, explicit bool, err error) {
	ns, explicit, err = f.Kube.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false, fmt.Errorf("read the namespace from kubeconfig: %w", err)
	}
	return ns, explicit, nil
}

// ExplainConnectionError turns "the cluster is not there" into one line that says which
// server and what to check; other errors pass through wrapped.
func ExplainConnectionError(host string, err error) error {
	var netErr net.Error
	var urlErr *url.Error
	msg := err.Error()
	if errors.As(err, &netErr) || errors.As(err, &urlErr) || strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host") {
		return fmt.Errorf("cannot reach the API server at %s: %v (is the cluster up, and is --context or KUBECONFIG the one you meant?)", host, rootCause(err))
	}
	return err
}

func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
