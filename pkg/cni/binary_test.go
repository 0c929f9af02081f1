package cni

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestMain removes the binaries the tests built (testenv.Command) once they are done.
func TestMain(m *testing.M) { os.Exit(testenv.BuildsMain(m)) }

// cniCall runs the plugin binary as containerd does: in the node's network namespace,
// with the CNI_* variables and the network's configuration on stdin. It returns the
// exit status and stdout.
func (l *lab) cniCall(t *testing.T, bin, command, netnsPath, pod string, conf map[string]any) (int, []byte) {
	t.Helper()
	stdin, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(l.ctx, "nsenter", "--net=/run/netns/"+l.node.Name, bin)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"CNI_COMMAND=" + command,
		"CNI_CONTAINERID=" + containerID,
		"CNI_NETNS=" + netnsPath,
		"CNI_IFNAME=eth0",
		"CNI_PATH=/opt/cni/bin",
		"CNI_ARGS=K8S_POD_INFRA_CONTAINER_ID=" + containerID + ";K8S_POD_UID=" + podUID + ";IgnoreUnknown=1;K8S_POD_NAMESPACE=blue;K8S_POD_NAME=" + pod,
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.Bytes()
	case errors.As(err, &exit):
		t.Logf("ovnk-cni %s exited %d; stderr:\n%s", command, exit.ExitCode(), stderr.String())
		return exit.ExitCode(), stdout.Bytes()
	default:
		t.Fatalf("run ovnk-cni %s: %v\n%s", command, err, stderr.String())
		return 0, nil
	}
}

// TestBinary runs cmd/ovnk-cni as containerd would (in the node's network namespace,
// with the environment and stdin containerd gives it), against an agent serving plans
// on its unix socket and a stand-in for ovn-controller, with the default wait for
// ovn-installed: ADD prints a result containerd takes, CHECK and DEL with prevResult
// succeed, and a pod the agent does not know fails with a CNI error.
func TestBinary(t *testing.T) {
	l := newLab(t)
	testenv.NeedBinaries(t, "nsenter")
	bin := testenv.Command(t, "ovnk-cni")
	socket := agent(t, func(r *http.Request) (int, any) {
		if r.URL.Path != "/cni/v1/pods/blue/web" {
			return http.StatusNotFound, podnet.Error{Reason: podnet.ReasonNotFound, Message: "pod blue/gone is not known on node node1"}
		}
		return http.StatusOK, testPlan(r.URL.Query().Get("uid"))
	})
	logFile := filepath.Join(t.TempDir(), "ovnk-cni.log")
	conf := map[string]any{
		"cniVersion": "1.0.0", "name": "ovnk", "type": "ovnk-cni",
		"agentSocket": socket, "ovsAddress": l.ovs.DB.Endpoint, "logFile": logFile,
	}
	ns := podNetns(t)

	var marked atomic.Bool
	l.markInstalled(t, 2, &marked)
	code, out := l.cniCall(t, bin, "ADD", ns, "web", conf)
	if code != 0 {
		t.Fatalf("ADD exited %d: %s", code, out)
	}
	if !marked.Load() {
		t.Error("ADD returned before the ports were marked ovn-installed")
	}
	generic, err := version.NewResult("1.0.0", out)
	if err != nil {
		t.Fatalf("ADD printed %s, not a CNI 1.0.0 result: %v", out, err)
	}
	res, err := types100.GetResult(generic)
	if err != nil {
		t.Fatal(err)
	}
	var eth0 []string
	for _, ip := range res.IPs {
		if i := *ip.Interface; res.Interfaces[i].Name == "eth0" && res.Interfaces[i].Sandbox == ns {
			eth0 = append(eth0, ip.Address.String())
		}
	}
	if !strings.Contains(string(out), `"cniVersion": "1.0.0"`) || strings.Join(eth0, " ") != "10.244.0.5/24 fd00:10:244:1::5/64" {
		t.Errorf("result %s: eth0's addresses %v", out, eth0)
	}
	l.checkWired(t, ns)

	// CHECK and DEL get the result back as prevResult.
	conf["prevResult"] = json.RawMessage(out)
	if code, out := l.cniCall(t, bin, "CHECK", ns, "web", conf); code != 0 {
		t.Errorf("CHECK exited %d: %s", code, out)
	}
	if code, out := l.cniCall(t, bin, "DEL", ns, "web", conf); code != 0 || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("DEL exited %d: %s", code, out)
	}
	l.nothingLeft(t, containerID, ns)

	delete(conf, "prevResult")
	code, out = l.cniCall(t, bin, "ADD", ns, "gone", conf)
	var e errorOutput
	if err := json.Unmarshal(out, &e); err != nil || code != 1 || e.Error == nil || e.Code != CodeAgentRefused || e.Msg != "pod blue/gone is not known on node node1" || e.CNIVersion != "1.0.0" {
		t.Errorf("ADD of an unknown pod: exit %d, %s; want 1 and a CNI error with code %d", code, out, CodeAgentRefused)
	}

	logged, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ovnk-cni ADD pod blue/web container 3f2b8c0d9e1a: ", "wired 2 interfaces", "ovnk-cni DEL pod blue/web", "failed: pod blue/gone is not known"} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("log file lacks %q:\n%s", want, logged)
		}
	}
}
