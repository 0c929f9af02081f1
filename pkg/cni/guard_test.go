package cni

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/ovnk/ovnk/pkg/host/vswitch"
)

// A plan for another pod UID than the sandbox's (the agent answering for a pod of the
// same name created since) is refused before anything is made.
func TestAddRefusesAnotherUID(t *testing.T) {
	l := newLab(t)
	ns := podNetns(t)
	const otherUID = "0e7f9d2c-1111-4c2d-9e3f-0a1b2c3d4e5f"
	conf := l.config(t, agent(t, servePlan(testPlan(otherUID))), "")
	_, err := l.plugin(t).Add(l.ctx, args("ADD", containerID, ns), conf)
	var e *types.Error
	want := "pod blue/web: the agent planned UID " + otherUID + ", the sandbox is for UID " + podUID
	if !errors.As(err, &e) || e.Code != CodeAgentRefused || e.Msg != want {
		t.Fatalf("ADD with a plan of another UID: %v; want code %d and %q", err, CodeAgentRefused, want)
	}
	l.nothingLeft(t, containerID, ns)
}

// ADD has one deadline for all its steps: when it passes (here while waiting for an
// ovn-controller that never marks the ports), ADD undoes what it made and says why,
// well before the runtime would kill it.
func TestAddDeadlineUndoes(t *testing.T) {
	l := newLab(t)
	ns := podNetns(t)
	p := l.plugin(t)
	p.AddTimeout = 2 * time.Second
	conf := l.config(t, agent(t, servePlan(testPlan(podUID))), `,"ovnInstalledTimeout":"60s"`)
	start := time.Now()
	_, err := p.Add(l.ctx, args("ADD", containerID, ns), conf)
	took := time.Since(start)
	var e *types.Error
	if !errors.As(err, &e) || e.Code != CodeTryAgainLater || !strings.Contains(e.Msg, "pod blue/web: ovn-controller has not installed its ports") {
		t.Fatalf("ADD past its deadline: %v; want code %d naming the pod", err, CodeTryAgainLater)
	}
	if took < 2*time.Second || took > 2*time.Second+undoTimeout {
		t.Errorf("ADD took %s; want its 2s deadline and at most %s to undo", took, undoTimeout)
	}
	l.nothingLeft(t, containerID, ns)
}

// Pod ports are ovnk-cni's, not the agent's: the agent's OVS client neither lists them
// among its own nor deletes them, so no resync of the agent's ports can unplug a pod.
func TestPodPortsAreNotTheAgents(t *testing.T) {
	l := newLab(t)
	ns := podNetns(t)
	p := l.plugin(t)
	conf := l.config(t, agent(t, servePlan(testPlan(podUID))), "")
	if _, err := p.Add(l.ctx, args("ADD", containerID, ns), conf); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(l.ctx, 30*time.Second)
	defer cancel()
	agentOVS, err := vswitch.Connect(ctx, l.ovs.DB.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer agentOVS.Close()
	owned, err := agentOVS.OwnedPorts(ctx, DefaultBridge)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(owned, "3f2b8c0d9e1a4b5") || slices.Contains(owned, "3f2b8c0d9e1a4_1") {
		t.Errorf("the agent's client lists pod ports as its own: %v", owned)
	}
	_, err = agentOVS.DeletePort(ctx, DefaultBridge, "3f2b8c0d9e1a4b5")
	var foreign *vswitch.ForeignPortError
	if !errors.As(err, &foreign) {
		t.Errorf("the agent's client deleting a pod port: %v; want a *ForeignPortError", err)
	}
	l.checkWired(t, ns)

	// And the plugin's client never takes the agent's ports for a pod's.
	if _, err := agentOVS.EnsurePort(ctx, DefaultBridge, vswitch.Port{Name: "ovn-k8s-mp0", Type: "internal",
		ExternalIDs: map[string]string{sandboxKey: containerID}}); err != nil {
		t.Fatal(err)
	}
	if err := p.Del(l.ctx, args("DEL", containerID, ns), conf); err != nil {
		t.Fatal(err)
	}
	if st, ok, err := agentOVS.Port(ctx, "ovn-k8s-mp0"); err != nil || !ok {
		t.Errorf("DEL removed the agent's port tagged with the container id: %+v, %v, %v", st, ok, err)
	}
}
