package versioncmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
)

func TestValidateRejectsUnknownOutput(t *testing.T) {
	err := (&Options{Output: "wide"}).Validate()
	if err == nil || !strings.Contains(err.Error(), `"wide"`) || !strings.Contains(err.Error(), "-o json") {
		t.Fatalf("Validate(-o wide) = %v, want an error naming the value and the fix", err)
	}
}

func TestClientOnlyNeverContactsTheServer(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &Options{
		ClientOnly: true,
		Output:     "json",
		IOStreams:  streams,
		Discovery: func() (discovery.DiscoveryInterface, error) {
			return nil, errors.New("the server must not be contacted")
		},
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var info Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if info.Client == "" || info.Server != "" || info.Resources != nil {
		t.Errorf("client-only info = %+v", info)
	}
}

func TestTextListsResources(t *testing.T) {
	var out bytes.Buffer
	info := Info{Client: "v1", Server: "v1.37.1", Resources: []string{"egressips.v1", "userdefinednetworks.v1"}}
	if err := printInfo(&out, "", info, 0); err != nil {
		t.Fatal(err)
	}
	want := "Client Version: v1\nServer Version: v1.37.1\nOVN-Kubernetes resources: 2 served\n  egressips.v1\n  userdefinednetworks.v1\n"
	if out.String() != want {
		t.Errorf("text output:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := printInfo(&out, "", Info{Client: "v1", Server: "v1.37.1"}, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "none served (the OVN-Kubernetes CRDs are not installed)") {
		t.Errorf("a cluster without the CRDs is not called out:\n%s", out.String())
	}
}
