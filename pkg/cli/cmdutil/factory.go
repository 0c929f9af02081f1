// Package cmdutil is what every `kubectl ovnk` command shares: the connection to the
// cluster (kubectl's flags), the plugin's own settings, output formats and the terminal
// (colour, width). Commands receive one Factory and ask it for what they need, so a test
// can point a whole command tree at a test API server.
package cmdutil

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// Scheme holds the types the plugin reads and writes: Kubernetes' own and k8s.ovn.org's.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := ovnkv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// RESTConfig is the API server connection kubectl's flags and kubeconfig describe.
func (f *Factory) RESTConfig() (*rest.Config, error) {
	rc, err := f.Kube.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, errors.New("no cluster to talk to: set KUBECONFIG or pass --kubeconfig (for the local sandbox, run `make demo` and use the KUBECONFIG line it prints)")
		}
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return rc, nil
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
