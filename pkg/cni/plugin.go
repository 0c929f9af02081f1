// Package cni is ovnk's CNI plugin (cmd/ovnk-cni), which the container runtime runs on
// a node to wire each pod sandbox: ADD asks the node's agent for the pod's plan
// (package podnet), makes a veth per interface with the pod's end in the sandbox's
// network namespace, plugs the host end into br-int with the logical switch port's
// external_ids and waits until ovn-controller has installed it; DEL removes what ADD
// made, by container id, without the agent; CHECK compares the sandbox with ADD's
// result. docs/agent.md ("CNI") has the protocol between plugin and agent.
package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/ovnk/ovnk/pkg/host/vswitch"
	"github.com/ovnk/ovnk/pkg/podnet"
)

// Plugin carries out CNI commands. The zero value is the plugin as the runtime runs
// it; tests set the fields.
type Plugin struct {
	// HostNetns is the namespace that holds the host ends of the veths and in which
	// ovs-vswitchd runs: "" for the one the process runs in (the node's), or a path or
	// name under /run/netns.
	HostNetns string
	// Log receives a line per step; nil logs to the configuration's logFile, else to
	// stderr (which containerd copies into its own log).
	Log *log.Logger
	// HTTP asks the agent; nil uses a client without proxies.
	HTTP *http.Client
}

// Run carries out the command of the environment (getenv) with the configuration on
// stdin, prints the result or the CNI error on stdout and returns the exit status: 0,
// or 1 after an error.
func (p *Plugin) Run(ctx context.Context, getenv func(string) string, stdin io.Reader, stdout io.Writer) int {
	version := SpecVersion
	fail := func(err error) int {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: CodeDataplane, Msg: err.Error()}
		}
		_ = json.NewEncoder(stdout).Encode(errorOutput{CNIVersion: version, Error: e})
		if p.Log != nil {
			p.Log.Printf("failed: %v", e)
		}
		return 1
	}
	a, err := ParseArgs(getenv)
	if err != nil {
		return fail(err)
	}
	if a.Command == "VERSION" {
		_ = json.NewEncoder(stdout).Encode(versionInfo{CNIVersion: SpecVersion, SupportedVersions: SupportedVersions})
		return 0
	}
	input, err := io.ReadAll(stdin)
	if err != nil {
		return fail(&Error{Code: CodeDecodingFailure, Msg: "read the network configuration from stdin", Details: err.Error()})
	}
	c, err := ParseConfig(input)
	if err != nil {
		return fail(err)
	}
	version = c.CNIVersion
	if p.Log == nil {
		out := io.Writer(os.Stderr)
		if c.LogFile != "" {
			f, err := os.OpenFile(c.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return fail(errorf(CodeInvalidConfig, "network %q: logFile %s: %v", c.Name, c.LogFile, err))
			}
			defer f.Close()
			out = f
		}
		p.Log = log.New(out, fmt.Sprintf("ovnk-cni %s pod %s container %.12s: ", a.Command, a.Pod(), a.ContainerID), log.LstdFlags|log.Lmicroseconds)
	}
	switch a.Command {
	case "ADD":
		res, err := p.Add(ctx, a, c)
		if err != nil {
			return fail(err)
		}
		res.CNIVersion = c.CNIVersion
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return fail(err)
		}
	case "DEL":
		if err := p.Del(ctx, a, c); err != nil {
			return fail(err)
		}
	case "CHECK":
		if err := p.Check(ctx, a, c); err != nil {
			return fail(err)
		}
	}
	return 0
}

func (p *Plugin) logf(format string, args ...any) {
	if p.Log != nil {
		p.Log.Printf(format, args...)
	}
}

func (p *Plugin) httpClient() *http.Client {
	if p.HTTP != nil {
		return p.HTTP
	}
	return &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: requestTimeout}).DialContext}}
}

// dataplaneError is a failure to wire, unwire or check the pod, naming it.
func dataplaneError(a Args, err error) *Error {
	return &Error{Code: CodeDataplane, Msg: fmt.Sprintf("%s of pod %s (container %s)", strings.ToLower(a.Command), a.Pod(), a.ContainerID), Details: err.Error()}
}

// Add wires the pod: it asks the agent for the plan, removes whatever an earlier ADD of
// the same container left (so a repeated ADD, or one after a plugin that died half-way,
// starts afresh), makes the interfaces and ports and waits for ovn-controller. On any
// failure it removes what it made before returning the error.
func (p *Plugin) Add(ctx context.Context, a Args, c Config) (*Result, error) {
	plan, err := fetchPlan(ctx, p.httpClient(), c.AgentURL, a, c.agentTimeout, p.logf)
	if err != nil {
		return nil, err
	}
	if a.PodUID != "" && plan.UID != a.PodUID {
		return nil, errorf(CodeAgentRefused, "pod %s: the agent planned UID %s, the sandbox is for UID %s", a.Pod(), plan.UID, a.PodUID)
	}
	// The first interface is the runtime's to name.
	plan.Interfaces = slices.Clone(plan.Interfaces)
	if len(plan.Interfaces) > 0 {
		plan.Interfaces[0].Name = a.IfName
	}
	if err := plan.Validate(); err != nil {
		return nil, &Error{Code: CodeAgentRefused, Msg: fmt.Sprintf("the agent's plan of pod %s cannot be wired", a.Pod()), Details: err.Error()}
	}
	host, pod, ovs, err := p.open(ctx, a, c)
	if err != nil {
		return nil, dataplaneError(a, err)
	}
	defer host.Close()
	defer pod.Close()
	defer ovs.Close()
	if err := p.cleanup(ctx, host, ovs, c.Bridge, a.ContainerID); err != nil {
		return nil, dataplaneError(a, fmt.Errorf("remove an earlier wiring: %w", err))
	}
	res, ports, err := p.wire(ctx, host, pod, ovs, a, c, plan)
	if err == nil && c.installedTimeout > 0 {
		if err = waitInstalled(ctx, ovs, ports, c.installedTimeout); err != nil {
			err = &Error{Code: CodeTryAgainLater, Msg: fmt.Sprintf("pod %s: ovn-controller has not installed its ports", a.Pod()), Details: err.Error()}
		}
	}
	if err != nil {
		// Undo with a context of its own: the caller's may be what ran out.
		undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), ovsConnectTimeout)
		defer cancel()
		if cerr := p.cleanup(undo, host, ovs, c.Bridge, a.ContainerID); cerr != nil {
			p.logf("undo: %v", cerr)
		}
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, dataplaneError(a, err)
	}
	p.logf("wired %d interfaces: %s", len(plan.Interfaces), strings.Join(ports, ", "))
	return res, nil
}

// open opens the host's and the pod's namespaces and connects to OVS.
func (p *Plugin) open(ctx context.Context, a Args, c Config) (host, pod *namespace, ovs *vswitch.Client, err error) {
	if host, err = openNamespace(p.HostNetns); err != nil {
		return nil, nil, nil, err
	}
	if pod, err = openNamespace(a.Netns); err != nil {
		host.Close()
		return nil, nil, nil, err
	}
	if ovs, err = connectOVS(ctx, c.OVSAddress); err != nil {
		host.Close()
		pod.Close()
		return nil, nil, nil, err
	}
	return host, pod, ovs, nil
}

// wire makes every interface of the plan and returns the result and the ports.
func (p *Plugin) wire(ctx context.Context, host, pod *namespace, ovs *vswitch.Client, a Args, c Config, plan podnet.Plan) (*Result, []string, error) {
	res := &Result{CNIVersion: c.CNIVersion}
	var ports []string
	for i, ifc := range plan.Interfaces {
		hostName := podnet.HostInterfaceName(a.ContainerID, i)
		hostMAC, err := createInterface(host, pod, hostName, ifc.Name, ifc)
		if err != nil {
			return nil, nil, err
		}
		if err := plugPort(ctx, ovs, c.Bridge, hostName, portIDs(plan, ifc, a.ContainerID)); err != nil {
			return nil, nil, err
		}
		ports = append(ports, hostName)
		mac, _ := net.ParseMAC(ifc.MAC) // checked by Validate
		res.Interfaces = append(res.Interfaces,
			Interface{Name: hostName, Mac: hostMAC},
			Interface{Name: ifc.Name, Mac: mac.String(), Sandbox: a.Netns})
		idx := len(res.Interfaces) - 1
		for _, addr := range ifc.IPs {
			res.IPs = append(res.IPs, IPConfig{Interface: &idx, Address: addr, Gateway: gatewayOf(ifc, addr)})
		}
		for _, r := range ifc.Routes {
			res.Routes = append(res.Routes, Route{Dst: r.Dst, GW: r.Via})
		}
		p.logf("interface %s (network %s, port %s): %s", ifc.Name, ifc.Network, ifc.IfaceID, hostName)
	}
	// Routes last: one through an interface may need another's subnet.
	for _, ifc := range plan.Interfaces {
		if err := addRoutes(pod, ifc.Name, ifc.Routes); err != nil {
			return nil, nil, err
		}
	}
	return res, ports, nil
}

// cleanup removes the sandbox's ports (unless ovs is nil) and host ends, found by
// container id.
func (p *Plugin) cleanup(ctx context.Context, host *namespace, ovs *vswitch.Client, bridge, containerID string) error {
	var errs []error
	var ports []string
	if ovs != nil {
		var err error
		ports, err = unplugPorts(ctx, ovs, bridge, containerID)
		errs = append(errs, err)
	}
	links, err := removeHostEnds(host, containerID)
	errs = append(errs, err)
	if len(ports)+len(links) > 0 {
		p.logf("removed ports [%s] and veths [%s]", strings.Join(ports, " "), strings.Join(links, " "))
	}
	return errors.Join(errs...)
}

// Del removes the sandbox's ports and veths. It needs neither the agent nor the pod's
// namespace (which may be gone, taking the pod ends with it), and succeeds when there
// is nothing to remove, however often it is called. With the OVS database down it
// still removes the veths, and fails for the runtime to call again.
func (p *Plugin) Del(ctx context.Context, a Args, c Config) error {
	host, err := openNamespace(p.HostNetns)
	if err != nil {
		return dataplaneError(a, err)
	}
	defer host.Close()
	ovs, ovsErr := connectOVS(ctx, c.OVSAddress)
	if ovsErr == nil {
		defer ovs.Close()
	}
	if err := errors.Join(p.cleanup(ctx, host, ovs, c.Bridge, a.ContainerID), ovsErr); err != nil {
		return dataplaneError(a, err)
	}
	return nil
}

// Check compares the sandbox with the result of its ADD (prevResult): every pod
// interface is in the pod's namespace with its MAC and addresses, and every host end
// exists and is a port of the bridge tagged with the container id.
func (p *Plugin) Check(ctx context.Context, a Args, c Config) error {
	prev := c.PrevResult
	if prev == nil {
		return errorf(CodeInvalidConfig, "check of pod %s (container %s): no prevResult to check against", a.Pod(), a.ContainerID)
	}
	host, pod, ovs, err := p.open(ctx, a, c)
	if err != nil {
		return dataplaneError(a, err)
	}
	defer host.Close()
	defer pod.Close()
	defer ovs.Close()
	ports, err := sandboxPorts(ctx, ovs, c.Bridge, a.ContainerID)
	if err != nil {
		return dataplaneError(a, err)
	}
	for i, ifc := range prev.Interfaces {
		if ifc.Sandbox == "" {
			if _, err := host.h.LinkByName(ifc.Name); err != nil {
				return dataplaneError(a, fmt.Errorf("host end %s in %s: %w", ifc.Name, host.name(), err))
			}
			if !slices.Contains(ports, ifc.Name) {
				return dataplaneError(a, fmt.Errorf("host end %s is not a port of %s tagged %s=%s", ifc.Name, c.Bridge, sandboxKey, a.ContainerID))
			}
			continue
		}
		if ifc.Sandbox != a.Netns {
			return dataplaneError(a, fmt.Errorf("interface %s is in sandbox %s, not %s", ifc.Name, ifc.Sandbox, a.Netns))
		}
		var addrs []netip.Prefix
		for _, ip := range prev.IPs {
			if ip.Interface != nil && *ip.Interface == i {
				addrs = append(addrs, ip.Address)
			}
		}
		if err := checkInterface(pod, ifc.Name, ifc.Mac, addrs); err != nil {
			return dataplaneError(a, err)
		}
	}
	return nil
}
