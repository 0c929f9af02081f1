package versioncmd

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"

	"github.com/ovnk/ovnk/test/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.KubeMain(m)) }

func TestVersionAgainstRealAPIServer(t *testing.T) {
	k := testenv.SharedKube(t)
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &Options{
		Output:    "json",
		IOStreams: streams,
		Discovery: func() (discovery.DiscoveryInterface, error) {
			return discovery.NewDiscoveryClientForConfig(k.RESTConfig)
		},
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var info Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if !strings.HasPrefix(info.Server, "v1.") {
		t.Errorf("server version = %q", info.Server)
	}
	want := []string{
		"clusternetworkconnects.v1", "clusteruserdefinednetworks.v1", "egressips.v1",
		"routeadvertisements.v1", "userdefinednetworks.v1",
	}
	if strings.Join(info.Resources, ",") != strings.Join(want, ",") {
		t.Errorf("served OVN resources = %v, want %v", info.Resources, want)
	}
}
