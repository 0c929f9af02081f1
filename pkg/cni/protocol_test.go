package cni

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/ovnk/ovnk/pkg/podnet"
)

// containerdEnv is the environment containerd 1.6 gives a plugin for ADD (REALCLUSTER.md).
func containerdEnv(command string) map[string]string {
	return map[string]string{
		"CNI_COMMAND":     command,
		"CNI_CONTAINERID": "3f2b8c0d9e1a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4",
		"CNI_NETNS":       "/var/run/netns/cni-7c1d9e4a-0b2f-4e6a-8c3d-5f1a2b3c4d5e",
		"CNI_IFNAME":      "eth0",
		"CNI_PATH":        "/opt/cni/bin",
		"CNI_ARGS":        "K8S_POD_INFRA_CONTAINER_ID=3f2b8c0d;K8S_POD_UID=5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f;IgnoreUnknown=1;K8S_POD_NAMESPACE=blue;K8S_POD_NAME=web",
	}
}

func getenv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseArgs(t *testing.T) {
	a, err := ParseArgs(getenv(containerdEnv("ADD")))
	if err != nil {
		t.Fatal(err)
	}
	want := Args{
		Command: "ADD", ContainerID: "3f2b8c0d9e1a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4",
		Netns: "/var/run/netns/cni-7c1d9e4a-0b2f-4e6a-8c3d-5f1a2b3c4d5e", IfName: "eth0", Path: "/opt/cni/bin",
		PodNamespace: "blue", PodName: "web", PodUID: "5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f",
	}
	if a != want {
		t.Errorf("args %+v\nwant %+v", a, want)
	}

	// DEL needs the container id only: the netns may be gone, CNI_ARGS may be short.
	if _, err := ParseArgs(getenv(map[string]string{"CNI_COMMAND": "DEL", "CNI_CONTAINERID": "abc", "CNI_IFNAME": "eth0"})); err != nil {
		t.Errorf("DEL without netns: %v", err)
	}
	tests := []struct {
		name   string
		change func(m map[string]string)
		want   string
	}{
		{"no command", func(m map[string]string) { delete(m, "CNI_COMMAND") }, "CNI_COMMAND is not set"},
		{"bad command", func(m map[string]string) { m["CNI_COMMAND"] = "GC" }, `CNI_COMMAND "GC" is not ADD, DEL, CHECK or VERSION`},
		{"no netns", func(m map[string]string) { delete(m, "CNI_NETNS") }, "ADD of pod blue/web (container 3f2b8c0d9e1a"},
		{"no pod", func(m map[string]string) { m["CNI_ARGS"] = "IgnoreUnknown=1" }, "K8S_POD_NAMESPACE, K8S_POD_NAME not set"},
		{"malformed args", func(m map[string]string) { m["CNI_ARGS"] = "K8S_POD_NAME" }, `CNI_ARGS "K8S_POD_NAME": ARGS: invalid pair "K8S_POD_NAME"`},
		{"unknown arg", func(m map[string]string) { m["CNI_ARGS"] = "K8S_POD_NAMESPACE=blue;K8S_POD_NAME=web;FOO=1" }, `ARGS: unknown args ["FOO=1"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := containerdEnv("ADD")
			tt.change(env)
			_, err := ParseArgs(getenv(env))
			var e *types.Error
			if !errors.As(err, &e) || e.Code != CodeInvalidEnvironment || !strings.Contains(e.Msg, tt.want) {
				t.Errorf("error %v, want code %d and %q", err, CodeInvalidEnvironment, tt.want)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`{"cniVersion":"1.0.0","name":"ovnk","type":"ovnk-cni"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.AgentSocket != "/var/run/ovnk/cni.sock" || c.OVSAddress != DefaultOVSAddress || c.Bridge != DefaultBridge ||
		c.agentTimeout != DefaultAgentTimeout || c.installedTimeout != DefaultOVNInstalledTimeout || c.PrevResult != nil {
		t.Errorf("defaults: %+v", c)
	}
	c, err = ParseConfig([]byte(`{"cniVersion":"1.0.0","name":"ovnk","type":"ovnk-cni","ovnInstalledTimeout":"0s","agentSocket":"/run/x.sock",
		"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"/x"}],"ips":[{"interface":0,"address":"10.244.0.5/24"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	prev, err := c.previous()
	if err != nil {
		t.Fatal(err)
	}
	if c.installedTimeout != 0 || c.AgentSocket != "/run/x.sock" || prev == nil || *prev.IPs[0].Interface != 0 || prev.IPs[0].Address.String() != "10.244.0.5/24" {
		t.Errorf("ovnInstalledTimeout 0s, agentSocket and prevResult: %+v, prevResult %+v", c, prev)
	}
	tests := []struct {
		in   string
		code uint
		want string
	}{
		{`{`, CodeDecodingFailure, "not valid JSON"},
		{`{"cniVersion":"0.4.0","name":"ovnk"}`, CodeIncompatibleVersion, `network "ovnk": cniVersion "0.4.0" is not supported: use one of 1.0.0`},
		{`{"cniVersion":"1.0.0","name":"ovnk","agentTimeout":"soon"}`, CodeInvalidConfig, `agentTimeout "soon"`},
		{`{"cniVersion":"1.0.0","name":"ovnk","agentTimeout":"0s"}`, CodeInvalidConfig, `agentTimeout "0s"`},
		{`{"cniVersion":"1.0.0","name":"ovnk","ovnInstalledTimeout":"-1s"}`, CodeInvalidConfig, `ovnInstalledTimeout "-1s"`},
		{`{"cniVersion":"1.0.0","name":"ovnk","agentSocket":"cni.sock"}`, CodeInvalidConfig, `agentSocket "cni.sock": want the absolute path`},
		{`{"cniVersion":"1.0.0","name":"ovnk","prevResult":{"ips":[{"address":"nonsense"}]}}`, CodeDecodingFailure, `network "ovnk": prevResult is not a CNI 1.0.0 result`},
	}
	for _, tt := range tests {
		_, err := ParseConfig([]byte(tt.in))
		var e *types.Error
		if !errors.As(err, &e) || e.Code != tt.code || !strings.Contains(e.Error(), tt.want) {
			t.Errorf("ParseConfig(%s): %v, want code %d and %q", tt.in, err, tt.code, tt.want)
		}
	}
}

// The result of a wired plan as containerd reads it. Our output is parsed back with the
// CNI library, as libcni does, and then looked at as go-cni does: it files every
// address under the interface its index names and takes the pod's addresses from the
// interface named CNI_IFNAME, which must have its sandbox.
func TestResultShape(t *testing.T) {
	plan := testPlan(podUID)
	ifaces := []wired{
		{Interface: plan.Interfaces[0], hostName: "3f2b8c0d9e1a4b5", hostMAC: "5a:94:ef:e4:0c:ee"},
		{Interface: plan.Interfaces[1], hostName: "3f2b8c0d9e1a4_1", hostMAC: "5a:94:ef:e4:0c:ef"},
	}
	var out bytes.Buffer
	if err := resultOf("1.0.0", "/var/run/netns/cni-1", ifaces).PrintTo(&out); err != nil {
		t.Fatal(err)
	}
	generic, err := version.NewResult("1.0.0", out.Bytes())
	if err != nil {
		t.Fatalf("our result %s does not parse as CNI 1.0.0: %v", out.Bytes(), err)
	}
	res, err := types100.GetResult(generic)
	if err != nil {
		t.Fatal(err)
	}
	var ifaceLines []string
	for _, i := range res.Interfaces {
		ifaceLines = append(ifaceLines, fmt.Sprintf("%s %s mtu %d sandbox %q", i.Name, i.Mac, i.Mtu, i.Sandbox))
	}
	wantIfaces := []string{
		`3f2b8c0d9e1a4b5 5a:94:ef:e4:0c:ee mtu 1400 sandbox ""`,
		`eth0 0a:58:0a:f4:00:05 mtu 1400 sandbox "/var/run/netns/cni-1"`,
		`3f2b8c0d9e1a4_1 5a:94:ef:e4:0c:ef mtu 1300 sandbox ""`,
		`ovn-udn1 0a:58:0a:0a:00:05 mtu 1300 sandbox "/var/run/netns/cni-1"`,
	}
	if !slices.Equal(ifaceLines, wantIfaces) {
		t.Errorf("interfaces\n%s\nwant\n%s", strings.Join(ifaceLines, "\n"), strings.Join(wantIfaces, "\n"))
	}
	byIface := map[string][]string{}
	for _, ip := range res.IPs {
		if ip.Interface == nil || *ip.Interface < 0 || *ip.Interface >= len(res.Interfaces) {
			t.Fatalf("address %s has no valid interface index", ip.Address.String())
		}
		i := res.Interfaces[*ip.Interface]
		if i.Sandbox == "" {
			t.Errorf("address %s points at host end %s", ip.Address.String(), i.Name)
		}
		byIface[i.Name] = append(byIface[i.Name], ip.Address.String()+" gw "+ip.Gateway.String())
	}
	want := map[string][]string{
		"eth0":     {"10.244.0.5/24 gw <nil>", "fd00:10:244:1::5/64 gw <nil>"},
		"ovn-udn1": {"10.10.0.5/24 gw 10.10.0.1", "2014:100:200::5/64 gw 2014:100:200::1"},
	}
	if !reflect.DeepEqual(byIface, want) {
		t.Errorf("addresses by interface %v, want %v", byIface, want)
	}
	var routes []string
	for _, r := range res.Routes {
		routes = append(routes, r.Dst.String()+" via "+r.GW.String())
	}
	wantRoutes := []string{"100.64.0.0/16 via 10.244.0.1", "0.0.0.0/0 via 10.10.0.1", "::/0 via 2014:100:200::1"}
	if !slices.Equal(routes, wantRoutes) {
		t.Errorf("routes %v, want %v", routes, wantRoutes)
	}
	if strings.Contains(out.String(), `"dns"`) {
		t.Errorf("result %s has a dns key; the plugin sets none", out.Bytes())
	}
}

// run is Run with an environment and stdin, returning the exit status and stdout.
func run(t *testing.T, p *Plugin, env map[string]string, stdin string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := p.Run(ctx, getenv(env), strings.NewReader(stdin), &out)
	return code, out.String()
}

func TestRunVersionAndErrors(t *testing.T) {
	p := &Plugin{Log: testLogger(t)}
	code, out := run(t, p, map[string]string{"CNI_COMMAND": "VERSION"}, `{"cniVersion":"1.0.0"}`)
	if code != 0 {
		t.Errorf("VERSION: %d %s", code, out)
	}
	info, err := (&version.PluginDecoder{}).Decode([]byte(out))
	if err != nil || !slices.Equal(info.SupportedVersions(), []string{"1.0.0"}) {
		t.Errorf("VERSION printed %s (%v); want supportedVersions [1.0.0] as libcni reads it", out, err)
	}
	code, out = run(t, p, map[string]string{}, "")
	if code != 1 || !strings.Contains(out, `"code":4`) || !strings.Contains(out, `"cniVersion":"1.0.0"`) {
		t.Errorf("no command: %d %s; want exit 1 and a CNI error with code 4", code, out)
	}
	code, out = run(t, p, containerdEnv("ADD"), `not json`)
	if code != 1 || !strings.Contains(out, `"code":6`) {
		t.Errorf("bad stdin: %d %s; want code 6", code, out)
	}
}

// An answer the agent marks final ends ADD at once with the agent's message; any other
// — one that may change, one whose reason the plugin does not know, one that is not the
// agent's JSON at all — is asked again until the agent's timeout, then ADD says try
// again later, naming the pod and the agent's last word.
func TestAgentAnswers(t *testing.T) {
	var calls atomic.Int32
	var mu sync.Mutex
	status, body := 0, ""
	answer := func(s int, b string) {
		mu.Lock()
		defer mu.Unlock()
		status, body = s, b
		calls.Store(0)
	}
	socket := serveOnSocket(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/cni/v1/pods/blue/web" || r.URL.Query().Get("uid") != "5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f" {
			t.Errorf("request %s", r.URL)
		}
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	conf := func(timeout string) string {
		return `{"cniVersion":"1.0.0","name":"ovnk","type":"ovnk-cni","agentSocket":"` + socket + `","agentTimeout":"` + timeout + `"}`
	}

	for _, final := range []struct {
		status int
		reason string
	}{
		{http.StatusNotFound, podnet.ReasonNotFound}, {http.StatusConflict, podnet.ReasonUIDMismatch},
		{http.StatusGone, podnet.ReasonNetworkGone}, {http.StatusUnprocessableEntity, podnet.ReasonInvalid},
	} {
		answer(final.status, `{"reason":"`+final.reason+`","message":"pod blue/web: `+final.reason+`"}`)
		code, out := run(t, &Plugin{Log: testLogger(t)}, containerdEnv("ADD"), conf("5s"))
		var e errorOutput
		if err := json.Unmarshal([]byte(out), &e); err != nil || code != 1 || e.Error == nil ||
			e.Code != CodeAgentRefused || e.Msg != "pod blue/web: "+final.reason || calls.Load() != 1 {
			t.Errorf("%d %s: exit %d, %s (%d calls); want code %d with the agent's message, asked once", final.status, final.reason, code, out, calls.Load(), CodeAgentRefused)
		}
	}

	for _, again := range []struct {
		status     int
		body, last string
	}{
		{http.StatusTooEarly, `{"reason":"NotAllocated","message":"the leader has not allocated pod blue/web's addresses yet"}`, "has not allocated pod blue/web"},
		{http.StatusTooEarly, `{"reason":"NotProgrammed","message":"network blue is not programmed yet"}`, "network blue is not programmed yet"},
		{http.StatusServiceUnavailable, `{"reason":"NotReady","message":"the agent of node node1 has not applied its zone yet"}`, "has not applied its zone yet"},
		{http.StatusNotFound, `{"reason":"SomethingNew","message":"a newer agent's reason"}`, "a newer agent's reason"},
		{http.StatusBadGateway, `<html>proxy error</html>`, "the agent answered HTTP 502: <html>proxy error</html>"},
		{http.StatusOK, `{"interfaces":`, "the agent's plan (HTTP 200) is not valid JSON"},
	} {
		answer(again.status, again.body)
		start := time.Now()
		code, out := run(t, &Plugin{Log: testLogger(t)}, containerdEnv("ADD"), conf("600ms"))
		var e errorOutput
		if err := json.Unmarshal([]byte(out), &e); err != nil || code != 1 || e.Error == nil || e.Code != CodeTryAgainLater ||
			!strings.Contains(e.Msg, "no network plan for pod blue/web from the agent at "+socket) || !strings.Contains(e.Details, again.last) {
			t.Errorf("%d %s: exit %d, %s; want code %d naming the pod, the socket and %q", again.status, again.body, code, out, CodeTryAgainLater, again.last)
		}
		if calls.Load() < 2 || time.Since(start) < 600*time.Millisecond {
			t.Errorf("%d %s was asked %d times in %s; want again and again for the 600ms timeout", again.status, again.body, calls.Load(), time.Since(start))
		}
	}
}

// No agent listening at all (it restarts, its socket is not there yet): asked again,
// then try again later.
func TestAgentAway(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "nobody.sock")
	code, out := run(t, &Plugin{Log: testLogger(t)}, containerdEnv("ADD"),
		`{"cniVersion":"1.0.0","name":"ovnk","type":"ovnk-cni","agentSocket":"`+socket+`","agentTimeout":"300ms"}`)
	var e errorOutput
	if err := json.Unmarshal([]byte(out), &e); err != nil || code != 1 || e.Error == nil || e.Code != CodeTryAgainLater ||
		!strings.Contains(e.Details, "the agent does not answer") || !strings.Contains(e.Details, socket) {
		t.Errorf("no agent: exit %d, %s; want code %d saying the agent does not answer at %s", code, out, CodeTryAgainLater, socket)
	}
}

// The plan a test agent serves: two interfaces as for a pod of a primary UDN.
func testPlan(uid string) podnet.Plan {
	return podnet.Plan{
		Namespace: "blue", Name: "web", UID: uid,
		Interfaces: []podnet.Interface{
			{
				Name: "eth0", Network: "default", IfaceID: "blue_web", MAC: "0a:58:0a:f4:00:05", MTU: 1400,
				IPs:    []netip.Prefix{netip.MustParsePrefix("10.244.0.5/24"), netip.MustParsePrefix("fd00:10:244:1::5/64")},
				Routes: []podnet.Route{{Dst: netip.MustParsePrefix("100.64.0.0/16"), Via: netip.MustParseAddr("10.244.0.1")}},
			},
			{
				Name: "ovn-udn1", Network: "cluster_udn_blue", IfaceID: "blue.blue_blue_web", MAC: "0a:58:0a:0a:00:05", MTU: 1300,
				IPs: []netip.Prefix{netip.MustParsePrefix("10.10.0.5/24"), netip.MustParsePrefix("2014:100:200::5/64")},
				Routes: []podnet.Route{
					{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.10.0.1")},
					{Dst: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("2014:100:200::1")},
				},
			},
		},
	}
}
