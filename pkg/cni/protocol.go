package cni

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/ovnk/ovnk/pkg/podnet"
)

// The CNI 1.0.0 protocol as far as this plugin speaks it: the environment, the network
// configuration on stdin, the result and the error on stdout, in the types of the
// reference library (github.com/containernetworking/cni pkg/types, pkg/types/100,
// pkg/version). Its dispatcher, pkg/skel, is not used: it reads the process's own
// environment and stdin and takes no context, where Run takes both as arguments, so the
// tests run the whole protocol in-process.

// SpecVersion is the CNI specification version the plugin implements.
const SpecVersion = "1.0.0"

// SupportedVersions are the cniVersion values the plugin accepts in a configuration.
// containerd 1.6 (libcni 1.1) passes 1.0.0 for a conflist written with 1.0.0, which is
// what the agent writes.
var SupportedVersions = []string{SpecVersion}

// Error codes of the CNI specification (types.Err*) the plugin uses, and its own (100 and
// up).
const (
	CodeIncompatibleVersion = types.ErrIncompatibleCNIVersion      // 1: the configuration's cniVersion is not supported
	CodeInvalidEnvironment  = types.ErrInvalidEnvironmentVariables // 4: a CNI_* variable is missing or malformed
	CodeDecodingFailure     = types.ErrDecodingFailure             // 6: stdin is not JSON
	CodeInvalidConfig       = types.ErrInvalidNetworkConfig        // 7: the configuration has a bad value
	CodeTryAgainLater       = types.ErrTryAgainLater               // 11: transient: the agent is not ready or has not allocated the pod
	// CodeAgentRefused: the agent answered that the pod cannot be wired (unknown pod,
	// a sandbox of an earlier pod of that name, a network gone, an allocation that
	// cannot be planned). Retrying the same sandbox will not help.
	CodeAgentRefused uint = 100
	// CodeDataplane: creating or checking the interfaces or OVS ports failed.
	CodeDataplane uint = 101
)

// errorf builds a CNI error with the code and a message.
func errorf(code uint, format string, args ...any) *types.Error {
	return types.NewError(code, fmt.Sprintf(format, args...), "")
}

// Args are the CNI_* environment variables of one call, and the pod they name.
type Args struct {
	Command     string // CNI_COMMAND: ADD, DEL, CHECK or VERSION
	ContainerID string // CNI_CONTAINERID: the pod sandbox's id
	Netns       string // CNI_NETNS: the sandbox's network namespace, a path
	IfName      string // CNI_IFNAME: the name of the first interface in the pod
	Path        string // CNI_PATH
	// From CNI_ARGS, as containerd's CRI sets them.
	PodNamespace string // K8S_POD_NAMESPACE
	PodName      string // K8S_POD_NAME
	PodUID       string // K8S_POD_UID; empty from runtimes that do not send it
}

// Pod is the pod's "namespace/name", for messages.
func (a Args) Pod() string { return a.PodNamespace + "/" + a.PodName }

// k8sArgs are the CNI_ARGS keys a Kubernetes runtime passes, as types.LoadArgs reads
// them: the field names are the keys, hence their spelling.
type k8sArgs struct {
	types.CommonArgs
	K8S_POD_NAMESPACE          types.UnmarshallableString
	K8S_POD_NAME               types.UnmarshallableString
	K8S_POD_UID                types.UnmarshallableString
	K8S_POD_INFRA_CONTAINER_ID types.UnmarshallableString
}

// ParseArgs reads the CNI_* variables through getenv and checks that those the command
// needs are there: ADD and CHECK need the container id, netns, interface name and the
// pod's namespace and name; DEL needs the container id only (the netns may be gone).
// CNI_ARGS keys other than the pod's are refused unless it holds IgnoreUnknown=1, as
// every Kubernetes runtime sends.
func ParseArgs(getenv func(string) string) (Args, error) {
	a := Args{
		Command:     getenv("CNI_COMMAND"),
		ContainerID: getenv("CNI_CONTAINERID"),
		Netns:       getenv("CNI_NETNS"),
		IfName:      getenv("CNI_IFNAME"),
		Path:        getenv("CNI_PATH"),
	}
	var k8s k8sArgs
	if raw := getenv("CNI_ARGS"); raw != "" {
		if err := types.LoadArgs(raw, &k8s); err != nil {
			return a, errorf(CodeInvalidEnvironment, "CNI_ARGS %q: %v", raw, err)
		}
	}
	a.PodNamespace, a.PodName, a.PodUID = string(k8s.K8S_POD_NAMESPACE), string(k8s.K8S_POD_NAME), string(k8s.K8S_POD_UID)
	var need []string
	switch a.Command {
	case "VERSION":
	case "ADD", "CHECK":
		need = []string{"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "K8S_POD_NAMESPACE", "K8S_POD_NAME"}
	case "DEL":
		need = []string{"CNI_CONTAINERID"}
	case "":
		return a, errorf(CodeInvalidEnvironment, "CNI_COMMAND is not set: this is a CNI plugin, run by the container runtime")
	default:
		return a, errorf(CodeInvalidEnvironment, "CNI_COMMAND %q is not ADD, DEL, CHECK or VERSION", a.Command)
	}
	value := map[string]string{"CNI_CONTAINERID": a.ContainerID, "CNI_NETNS": a.Netns, "CNI_IFNAME": a.IfName,
		"K8S_POD_NAMESPACE": a.PodNamespace, "K8S_POD_NAME": a.PodName}
	var missing []string
	for _, k := range need {
		if value[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return a, errorf(CodeInvalidEnvironment, "%s of pod %s (container %s): %s not set", a.Command, a.Pod(), a.ContainerID, strings.Join(missing, ", "))
	}
	return a, nil
}

// Defaults of Config.
const (
	DefaultAgentSocket         = podnet.DefaultSocket
	DefaultOVSAddress          = "unix:/var/run/openvswitch/db.sock"
	DefaultBridge              = "br-int"
	DefaultAgentTimeout        = 20 * time.Second
	DefaultOVNInstalledTimeout = 30 * time.Second
)

// Config is the plugin's entry of the conflist, as the runtime passes it on stdin: the
// library's NetConf (cniVersion, name, type, prevResult) and the plugin's own keys. It
// is only ever decoded (NetConf's MarshalJSON would drop the plugin's keys).
type Config struct {
	types.NetConf
	// AgentSocket is the node agent's unix socket serving plans (default
	// DefaultAgentSocket).
	AgentSocket string `json:"agentSocket,omitempty"`
	// OVSAddress is the node's Open vSwitch database (default DefaultOVSAddress).
	OVSAddress string `json:"ovsAddress,omitempty"`
	// Bridge is ovn-controller's integration bridge (default DefaultBridge).
	Bridge string `json:"bridge,omitempty"`
	// LogFile, when set, receives a line per call and step; otherwise stderr does.
	LogFile string `json:"logFile,omitempty"`
	// AgentTimeout is how long ADD asks the agent again while its answer may change
	// (a duration such as "20s"; default DefaultAgentTimeout).
	AgentTimeout string `json:"agentTimeout,omitempty"`
	// OVNInstalledTimeout is how long ADD waits for ovn-controller to mark the ports
	// ovn-installed (default DefaultOVNInstalledTimeout); "0s" does not wait, for
	// nodes or tests without ovn-controller.
	OVNInstalledTimeout string `json:"ovnInstalledTimeout,omitempty"`

	// The parsed durations.
	agentTimeout, installedTimeout time.Duration
}

// ParseConfig decodes and checks the configuration, filling in the defaults and
// parsing prevResult (NetConf.PrevResult) when there is one.
func ParseConfig(stdin []byte) (Config, error) {
	var c Config
	if err := json.Unmarshal(stdin, &c); err != nil {
		return c, types.NewError(CodeDecodingFailure, "the network configuration on stdin is not valid JSON", err.Error())
	}
	if !slices.Contains(SupportedVersions, c.CNIVersion) {
		return c, errorf(CodeIncompatibleVersion, "network %q: cniVersion %q is not supported: use one of %s", c.Name, c.CNIVersion, strings.Join(SupportedVersions, ", "))
	}
	if err := version.ParsePrevResult(&c.NetConf); err != nil {
		return c, types.NewError(CodeDecodingFailure, fmt.Sprintf("network %q: prevResult is not a CNI %s result", c.Name, c.CNIVersion), err.Error())
	}
	if c.AgentSocket == "" {
		c.AgentSocket = DefaultAgentSocket
	}
	if !strings.HasPrefix(c.AgentSocket, "/") {
		return c, errorf(CodeInvalidConfig, "network %q: agentSocket %q: want the absolute path of the agent's unix socket, such as %s", c.Name, c.AgentSocket, DefaultAgentSocket)
	}
	if c.OVSAddress == "" {
		c.OVSAddress = DefaultOVSAddress
	}
	if c.Bridge == "" {
		c.Bridge = DefaultBridge
	}
	var err error
	if c.agentTimeout, err = duration(c.AgentTimeout, DefaultAgentTimeout); err != nil || c.agentTimeout <= 0 {
		return c, errorf(CodeInvalidConfig, "network %q: agentTimeout %q: want a positive duration such as 20s", c.Name, c.AgentTimeout)
	}
	if c.installedTimeout, err = duration(c.OVNInstalledTimeout, DefaultOVNInstalledTimeout); err != nil || c.installedTimeout < 0 {
		return c, errorf(CodeInvalidConfig, "network %q: ovnInstalledTimeout %q: want a duration such as 30s, or 0s not to wait", c.Name, c.OVNInstalledTimeout)
	}
	return c, nil
}

func duration(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	return time.ParseDuration(s)
}

// previous is the configuration's prevResult as a CNI 1.x result; nil without one.
func (c Config) previous() (*types100.Result, error) {
	if c.PrevResult == nil {
		return nil, nil
	}
	return types100.GetResult(c.PrevResult)
}

// errorOutput is a CNI error as printed: the library's Error and the version it is
// written in, which the specification asks for and types.Error lacks.
type errorOutput struct {
	CNIVersion string `json:"cniVersion"`
	*types.Error
}
