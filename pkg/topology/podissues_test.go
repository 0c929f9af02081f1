package topology

import (
	"strings"
	"testing"

	"github.com/ovnk/ovnk/pkg/topology/topologytest"
)

// TestLocalPodsThatCannotBeProgrammedAreNamed: a local pod with a malformed interface is
// left out of the zone and named in Result.Pods (the agent records an event on it); a
// remote pod's trouble is its own zone's to report.
func TestLocalPodsThatCannotBeProgrammedAreNamed(t *testing.T) {
	st := topologytest.Layer3()
	for _, p := range st.Pods {
		if p.Name == "client" || p.Name == "dns" {
			iface := p.Networks["default"]
			iface.MAC = "zz"
			p.Networks["default"] = iface
		}
	}
	res, err := Compile(st, "node1")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pods) != 1 || res.Pods["default/client"] == nil || !strings.Contains(res.Pods["default/client"].Error(), `MAC "zz"`) {
		t.Errorf("Pods = %v, want default/client alone, naming its MAC", res.Pods)
	}
	for _, lsp := range res.Rows.SwitchPorts {
		if lsp.Name == "default_client" {
			t.Errorf("default_client's port is in the zone")
		}
	}
}
