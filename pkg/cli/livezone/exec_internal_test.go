package livezone

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ovnk/ovnk/pkg/ovn"
)

func TestNBAddressFromTheAgentContainer(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    corev1.Container
		want string
	}{
		{"flag=value in args", corev1.Container{Command: []string{"ovnk-agent", "run"}, Args: []string{"--http-address=:9476", "--nb-address=tcp:10.0.0.1:6641"}}, "tcp:10.0.0.1:6641"},
		{"flag value in command", corev1.Container{Command: []string{"ovnk-agent", "run", "--nb-address", "unix:/run/ovn/nb.sock"}}, "unix:/run/ovn/nb.sock"},
		{"no flag", corev1.Container{Command: []string{"ovnk-agent", "run", "--config", "/etc/ovnk/agent.conf"}}, ovn.DefaultNBEndpoint},
		{"flag without a value", corev1.Container{Args: []string{"--nb-address"}}, ovn.DefaultNBEndpoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nbAddress(&tc.c); got != tc.want {
				t.Errorf("nbAddress = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAgentContainerIsTheOneRunningTheAgent(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "sidecar", Command: []string{"/bin/sh"}},
		{Name: "main", Command: []string{"/usr/local/bin/ovnk-agent", "run"}},
	}}}
	c, err := agentContainer(pod)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "main" || agentCommand(c) != "/usr/local/bin/ovnk-agent" {
		t.Errorf("container %s, command %s", c.Name, agentCommand(c))
	}
	pod.Namespace, pod.Name = "ovnk-system", "other"
	pod.Spec.Containers[1].Command = []string{"other"}
	_, err = agentContainer(pod)
	want := "pod ovnk-system/other has no container running ovnk-agent (containers: sidecar, main): is it an ovnk agent pod?"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestStderrTailKeepsTheLastLines(t *testing.T) {
	b := tailBuffer{max: 64}
	for _, s := range []string{strings.Repeat("noise\n", 40), "I0101 connecting\n\n", "error: connect to NB: refused\n"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
	}
	if len(b.data) > 64 {
		t.Errorf("kept %d bytes, more than 64", len(b.data))
	}
	if got, want := b.lastLines(2), "I0101 connecting; error: connect to NB: refused"; got != want {
		t.Errorf("lastLines = %q, want %q", got, want)
	}
}

func TestDumpBufferOverflowIsNotedNotFailed(t *testing.T) {
	b := cappedBuffer{max: 10}
	for i, s := range []string{"12345", "67890"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	if b.overflow || b.buf.String() != "1234567890" {
		t.Fatalf("at the cap: overflow %v, kept %q", b.overflow, b.buf.String())
	}
	for i, s := range []string{"x", "y"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("write past the cap %d: %d, %v", i, n, err)
		}
	}
	if !b.overflow || b.buf.Len() != 0 {
		t.Errorf("past the cap: overflow %v, %d bytes kept", b.overflow, b.buf.Len())
	}
}
