package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ovnk/ovnk/pkg/poll"
)

// ComponentStatus is what Status found about one process of the sandbox.
type ComponentStatus struct {
	// Name says which process: "etcd", "kube-apiserver", "ovnk-node-1 NB", "ovnk-node-1 agent",
	// "forwarder", "pods daemon"….
	Name string
	// PID is the process's id, 0 when it does not run.
	PID int
	// Log is the process's log file.
	Log string
	// Problem is empty when the process runs and answers its readiness check, and says
	// what is wrong otherwise.
	Problem string
}

// component is a daemon of the sandbox with its readiness check.
type component struct {
	daemon *daemon
	ready  func(context.Context) error
}

// components lists the sandbox's processes in the order they start.
func (s *Sandbox) components() []component {
	cs := []component{
		{s.etcd(), poll.HTTPOK(s.EtcdURL + "/health")},
		{s.apiserver(), func(ctx context.Context) error {
			cfg, err := s.restConfig()
			if err != nil {
				return err
			}
			return apiserverReady(cfg)(ctx)
		}},
		{s.whoami(), dialsIn(s.Outside, whoAmIAddr)},
	}
	for _, n := range s.Nodes {
		dir := s.nodeDir(n)
		vswitchd, northd, controller := s.vswitchd(n), s.northd(n), s.controller(n)
		cs = append(cs,
			component{s.ovsdb(n), poll.Dials("unix", filepath.Join(dir, ovsSocket))},
			component{vswitchd, defaultCtl(vswitchd, dir, "ovs-vswitchd")},
			component{s.nb(n), poll.Dials("unix", filepath.Join(dir, nbSocket))},
			component{s.sb(n), poll.Dials("unix", filepath.Join(dir, sbSocket))},
			component{northd, defaultCtl(northd, dir, "ovn-northd")},
			component{controller, defaultCtl(controller, dir, "ovn-controller")},
		)
	}
	cs = append(cs, component{s.forwarder(), s.forwarderReady})
	for _, n := range s.Nodes {
		cs = append(cs, component{s.agent(n), poll.HTTPOK("http://" + n.HTTPAddress + "/readyz")})
	}
	// The pods daemon has no endpoint: running is all it can show.
	return append(cs, component{s.pods(), func(context.Context) error { return nil }})
}

// checkTimeout bounds one readiness check of Status.
const checkTimeout = 5 * time.Second

// Status checks, once, that every process runs and is ready.
func (s *Sandbox) Status(ctx context.Context) []ComponentStatus {
	var out []ComponentStatus
	for _, c := range s.components() {
		st := ComponentStatus{Name: c.daemon.name, Log: c.daemon.logFile}
		pid, err := c.daemon.readPID()
		switch {
		case err != nil:
			st.Problem = err.Error()
		case !running(pid, s.Dir):
			st.Problem = "not running"
		default:
			st.PID = pid
			checkCtx, cancel := context.WithTimeout(ctx, checkTimeout)
			if err := c.ready(checkCtx); err != nil {
				st.Problem = "not ready: " + err.Error()
			}
			cancel()
		}
		out = append(out, st)
	}
	return out
}

// notReady joins the problems of a Status, nil when there are none.
func notReady(statuses []ComponentStatus) error {
	var errs []error
	for _, st := range statuses {
		if st.Problem != "" {
			errs = append(errs, fmt.Errorf("%s: %s", st.Name, st.Problem))
		}
	}
	return errors.Join(errs...)
}
