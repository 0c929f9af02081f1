package cni

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
		{"malformed args", func(m map[string]string) { m["CNI_ARGS"] = "K8S_POD_NAME" }, `"K8S_POD_NAME" is not KEY=VALUE`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := containerdEnv("ADD")
			tt.change(env)
			_, err := ParseArgs(getenv(env))
			var e *Error
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
	if c.AgentURL != DefaultAgentURL || c.OVSAddress != DefaultOVSAddress || c.Bridge != DefaultBridge ||
		c.agentTimeout != DefaultAgentTimeout || c.installedTimeout != DefaultOVNInstalledTimeout {
		t.Errorf("defaults: %+v", c)
	}
	c, err = ParseConfig([]byte(`{"cniVersion":"1.0.0","name":"ovnk","type":"ovnk-cni","ovnInstalledTimeout":"0s",
		"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"/x"}],"ips":[{"interface":0,"address":"10.244.0.5/24"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.installedTimeout != 0 || c.PrevResult == nil || *c.PrevResult.IPs[0].Interface != 0 || c.PrevResult.IPs[0].Address != netip.MustParsePrefix("10.244.0.5/24") {
		t.Errorf("ovnInstalledTimeout 0s and prevResult: %+v", c)
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
	}
	for _, tt := range tests {
		_, err := ParseConfig([]byte(tt.in))
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code || !strings.Contains(e.Error(), tt.want) {
			t.Errorf("ParseConfig(%s): %v, want code %d and %q", tt.in, err, tt.code, tt.want)
		}
	}
}

// The result as containerd reads it: go-cni files every address under the interface
// its index names and takes the pod's addresses from the interface named CNI_IFNAME,
// which must have its sandbox.
func TestResultShape(t *testing.T) {
	one, three := 1, 3
	res := Result{
		CNIVersion: "1.0.0",
		Interfaces: []Interface{
			{Name: "3f2b8c0d9e1a4b5", Mac: "5a:94:ef:e4:0c:ee"},
			{Name: "eth0", Mac: "0a:58:0a:f4:00:05", Sandbox: "/var/run/netns/cni-1"},
			{Name: "3f2b8c0d9e1a4_1", Mac: "5a:94:ef:e4:0c:ef"},
			{Name: "ovn-udn1", Mac: "0a:58:0a:0a:00:05", Sandbox: "/var/run/netns/cni-1"},
		},
		IPs: []IPConfig{
			{Interface: &one, Address: netip.MustParsePrefix("10.244.0.5/24")},
			{Interface: &three, Address: netip.MustParsePrefix("10.10.0.5/24"), Gateway: netip.MustParseAddr("10.10.0.1")},
		},
		Routes: []Route{{Dst: netip.MustParsePrefix("0.0.0.0/0"), GW: netip.MustParseAddr("10.10.0.1")}},
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cniVersion":"1.0.0","interfaces":[{"name":"3f2b8c0d9e1a4b5","mac":"5a:94:ef:e4:0c:ee"},` +
		`{"name":"eth0","mac":"0a:58:0a:f4:00:05","sandbox":"/var/run/netns/cni-1"},` +
		`{"name":"3f2b8c0d9e1a4_1","mac":"5a:94:ef:e4:0c:ef"},{"name":"ovn-udn1","mac":"0a:58:0a:0a:00:05","sandbox":"/var/run/netns/cni-1"}],` +
		`"ips":[{"interface":1,"address":"10.244.0.5/24"},{"interface":3,"address":"10.10.0.5/24","gateway":"10.10.0.1"}],` +
		`"routes":[{"dst":"0.0.0.0/0","gw":"10.10.0.1"}],"dns":{}}`
	if string(b) != want {
		t.Errorf("result JSON\n%s\nwant\n%s", b, want)
	}
	// What go-cni does with it.
	var generic struct {
		Interfaces []struct{ Name, Sandbox string }
		IPs        []struct {
			Interface *int
			Address   string
		}
	}
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	byIface := map[string][]string{}
	for _, ip := range generic.IPs {
		if ip.Interface == nil || *ip.Interface < 0 || *ip.Interface >= len(generic.Interfaces) {
			t.Fatalf("address %s has no valid interface index", ip.Address)
		}
		byIface[generic.Interfaces[*ip.Interface].Name] = append(byIface[generic.Interfaces[*ip.Interface].Name], ip.Address)
	}
	if got := byIface["eth0"]; len(got) != 1 || got[0] != "10.244.0.5/24" || generic.Interfaces[1].Sandbox == "" {
		t.Errorf("eth0's addresses %v, sandbox %q", got, generic.Interfaces[1].Sandbox)
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
	if code != 0 || strings.TrimSpace(out) != `{"cniVersion":"1.0.0","supportedVersions":["1.0.0"]}` {
		t.Errorf("VERSION: %d %s", code, out)
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

// An answer that will not change ends ADD at once with the agent's message; one that
// may change is asked again until the agent's timeout, then ADD says try again later.
func TestAgentAnswers(t *testing.T) {
	var calls atomic.Int32
	status, body := http.StatusNotFound, `{"reason":"NotFound","message":"pod blue/web is not known on node node1"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/cni/v1/pods/blue/web" || r.URL.Query().Get("uid") != "5f0c2a4e-7a1b-4c2d-9e3f-0a1b2c3d4e5f" {
			t.Errorf("request %s", r.URL)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	conf := func(timeout string) string {
		return `{"cniVersion":"1.0.0","name":"ovnk","type":"ovnk-cni","agentURL":"` + srv.URL + `","agentTimeout":"` + timeout + `"}`
	}
	p := &Plugin{Log: testLogger(t)}
	code, out := run(t, p, containerdEnv("ADD"), conf("5s"))
	var e errorOutput
	if err := json.Unmarshal([]byte(out), &e); err != nil || code != 1 || e.Error == nil ||
		e.Code != CodeAgentRefused || e.Msg != "pod blue/web is not known on node node1" || calls.Load() != 1 {
		t.Errorf("404: exit %d, %s (%d calls); want code %d with the agent's message, asked once", code, out, calls.Load(), CodeAgentRefused)
	}

	calls.Store(0)
	status, body = http.StatusTooEarly, `{"reason":"NotAllocated","message":"the leader has not allocated pod blue/web's addresses yet"}`
	start := time.Now()
	code, out = run(t, &Plugin{Log: testLogger(t)}, containerdEnv("ADD"), conf("600ms"))
	if err := json.Unmarshal([]byte(out), &e); err != nil || code != 1 || e.Error == nil || e.Code != CodeTryAgainLater ||
		!strings.Contains(e.Msg, "no network plan for pod blue/web") || !strings.Contains(e.Details, "has not allocated pod blue/web") {
		t.Errorf("425: exit %d, %s; want code %d naming the pod and the agent's last word", code, out, CodeTryAgainLater)
	}
	if calls.Load() < 2 || time.Since(start) < 600*time.Millisecond {
		t.Errorf("425 was asked %d times in %s; want again and again for the 600ms timeout", calls.Load(), time.Since(start))
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
