package cni

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// The CNI 1.0.0 protocol as far as this plugin speaks it: the environment, the network
// configuration on stdin, the result and the error on stdout. The reference library
// (github.com/containernetworking/cni pkg/skel and pkg/types/100) would be a new
// module dependency; the shapes here are those of its types, field for field, so that
// swapping it in later changes no output.

// SpecVersion is the CNI specification version the plugin implements.
const SpecVersion = "1.0.0"

// SupportedVersions are the cniVersion values the plugin accepts in a configuration.
// containerd 1.6 (libcni 1.1) passes 1.0.0 for a conflist written with 1.0.0, which is
// what the agent writes.
var SupportedVersions = []string{SpecVersion}

// Error codes of the CNI specification, and this plugin's own (100 and up).
const (
	CodeIncompatibleVersion = 1  // the configuration's cniVersion is not supported
	CodeInvalidEnvironment  = 4  // a CNI_* variable is missing or malformed
	CodeDecodingFailure     = 6  // stdin is not JSON
	CodeInvalidConfig       = 7  // the configuration has a bad value
	CodeTryAgainLater       = 11 // transient: the agent is not ready or has not allocated the pod
	// CodeAgentRefused: the agent answered that the pod cannot be wired (unknown pod,
	// a sandbox of an earlier pod of that name, a network gone, an allocation that
	// cannot be planned). Retrying the same sandbox will not help.
	CodeAgentRefused = 100
	// CodeDataplane: creating or checking the interfaces or OVS ports failed.
	CodeDataplane = 101
)

// Error is the CNI error object printed on stdout (with exit status 1).
type Error struct {
	Code    uint   `json:"code"`
	Msg     string `json:"msg"`
	Details string `json:"details,omitempty"`
}

// Error is the message and, if any, the details.
func (e *Error) Error() string {
	if e.Details == "" {
		return e.Msg
	}
	return e.Msg + ": " + e.Details
}

// errorf builds an *Error with the code and a message.
func errorf(code uint, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
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

// ParseArgs reads the CNI_* variables through getenv and checks that those the command
// needs are there: ADD and CHECK need the container id, netns, interface name and the
// pod's namespace and name; DEL needs the container id only (the netns may be gone).
// Unknown CNI_ARGS keys are ignored, as with IgnoreUnknown=1.
func ParseArgs(getenv func(string) string) (Args, error) {
	a := Args{
		Command:     getenv("CNI_COMMAND"),
		ContainerID: getenv("CNI_CONTAINERID"),
		Netns:       getenv("CNI_NETNS"),
		IfName:      getenv("CNI_IFNAME"),
		Path:        getenv("CNI_PATH"),
	}
	if raw := getenv("CNI_ARGS"); raw != "" {
		for pair := range strings.SplitSeq(raw, ";") {
			if pair == "" {
				continue
			}
			k, v, ok := strings.Cut(pair, "=")
			if !ok {
				return a, errorf(CodeInvalidEnvironment, "CNI_ARGS %q: %q is not KEY=VALUE", raw, pair)
			}
			switch k {
			case "K8S_POD_NAMESPACE":
				a.PodNamespace = v
			case "K8S_POD_NAME":
				a.PodName = v
			case "K8S_POD_UID":
				a.PodUID = v
			}
		}
	}
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
	DefaultAgentURL            = "http://127.0.0.1:9476"
	DefaultOVSAddress          = "unix:/var/run/openvswitch/db.sock"
	DefaultBridge              = "br-int"
	DefaultAgentTimeout        = 20 * time.Second
	DefaultOVNInstalledTimeout = 30 * time.Second
)

// Config is the plugin's entry of the conflist, as the runtime passes it on stdin.
type Config struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	// AgentURL is the node agent's HTTP server (default DefaultAgentURL).
	AgentURL string `json:"agentURL,omitempty"`
	// OVSAddress is the node's Open vSwitch database (default DefaultOVSAddress).
	OVSAddress string `json:"ovsAddress,omitempty"`
	// Bridge is ovn-controller's integration bridge (default DefaultBridge).
	Bridge string `json:"bridge,omitempty"`
	// LogFile, when set, receives a line per call and step; otherwise stderr does.
	LogFile string `json:"logFile,omitempty"`
	// AgentTimeout is how long ADD asks the agent again while it answers "not ready"
	// or "not allocated yet" (a duration such as "20s"; default DefaultAgentTimeout).
	AgentTimeout string `json:"agentTimeout,omitempty"`
	// OVNInstalledTimeout is how long ADD waits for ovn-controller to mark the ports
	// ovn-installed (default DefaultOVNInstalledTimeout); "0s" does not wait, for
	// nodes or tests without ovn-controller.
	OVNInstalledTimeout string `json:"ovnInstalledTimeout,omitempty"`
	// PrevResult is the result of the ADD, given to CHECK and DEL.
	PrevResult *Result `json:"prevResult,omitempty"`

	// The parsed durations.
	agentTimeout, installedTimeout time.Duration
}

// ParseConfig decodes and checks the configuration, filling in the defaults.
func ParseConfig(stdin []byte) (Config, error) {
	var c Config
	if err := json.Unmarshal(stdin, &c); err != nil {
		return c, &Error{Code: CodeDecodingFailure, Msg: "the network configuration on stdin is not valid JSON", Details: err.Error()}
	}
	if !slices.Contains(SupportedVersions, c.CNIVersion) {
		return c, errorf(CodeIncompatibleVersion, "network %q: cniVersion %q is not supported: use one of %s", c.Name, c.CNIVersion, strings.Join(SupportedVersions, ", "))
	}
	if c.AgentURL == "" {
		c.AgentURL = DefaultAgentURL
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

// Result is the CNI 1.0.0 result of ADD.
type Result struct {
	CNIVersion string `json:"cniVersion"`
	// Interfaces are, for each pod interface, the host end of its veth (no sandbox)
	// followed by the pod end (sandbox = the netns path).
	Interfaces []Interface `json:"interfaces,omitempty"`
	// IPs point at their pod interface by its index in Interfaces.
	IPs    []IPConfig `json:"ips,omitempty"`
	Routes []Route    `json:"routes,omitempty"`
	DNS    DNS        `json:"dns"`
}

// Interface is an interface of the result.
type Interface struct {
	Name    string `json:"name"`
	Mac     string `json:"mac,omitempty"`
	Sandbox string `json:"sandbox,omitempty"`
}

// IPConfig is an address of the result. Interface is required by containerd (go-cni
// rejects an address without it).
type IPConfig struct {
	Interface *int         `json:"interface,omitempty"`
	Address   netip.Prefix `json:"address"`
	Gateway   netip.Addr   `json:"gateway,omitzero"`
}

// Route is a route of the result.
type Route struct {
	Dst netip.Prefix `json:"dst"`
	GW  netip.Addr   `json:"gw,omitzero"`
}

// DNS is the result's DNS configuration; the plugin sets none (kubelet writes the
// pod's resolv.conf).
type DNS struct {
	Nameservers []string `json:"nameservers,omitempty"`
	Domain      string   `json:"domain,omitempty"`
	Search      []string `json:"search,omitempty"`
	Options     []string `json:"options,omitempty"`
}

// versionInfo is the answer to VERSION.
type versionInfo struct {
	CNIVersion        string   `json:"cniVersion"`
	SupportedVersions []string `json:"supportedVersions"`
}

// errorOutput is an Error as printed, with the version it is written in.
type errorOutput struct {
	CNIVersion string `json:"cniVersion"`
	*Error
}
