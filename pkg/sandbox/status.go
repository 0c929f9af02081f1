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
	// Name says which process: "etcd", "kube-apiserver", "ovnk-node-1 NB",
	// "ovnk-node-1 kubelet", "ovnk-node-1 agent pod", "forwarder"….
	Name string
	// PID is the process's id, 0 when it does not run (or is a pod's).
	PID int
	// Log is the process's log file; a pod's log is kubectl logs'.
	Log string
	// Problem is empty when the process runs and answers its readiness check, and says
	// what is wrong otherwise.
	Problem string
}

// component is a daemon of the sandbox with its readiness check, or a pod of the
// cluster (daemon nil, named by name), which only has the check.
type component struct {
	daemon *daemon
	ready  func(context.Context) error
	name   string
}

// components lists the sandbox's processes in the order they start.
func (s *Sandbox) components() []component {
	cs := []component{
		{daemon: s.etcd(), ready: poll.HTTPOK(s.EtcdURL + "/health")},
		{daemon: s.apiserver(), ready: func(ctx context.Context) error {
			cfg, err := s.restConfig()
			if err != nil {
				return err
			}
			return apiserverReady(cfg)(ctx)
		}},
		{daemon: s.controllerManager(), ready: func(context.Context) error { return nil }},
		{daemon: s.scheduler(), ready: func(context.Context) error { return nil }},
		{daemon: s.whoami(), ready: dialsIn(s.Outside, whoAmIAddr)},
	}
	for _, n := range s.Nodes {
		dir := s.nodeDir(n)
		vswitchd, northd, controller := s.vswitchd(n), s.northd(n), s.controller(n)
		cs = append(cs,
			component{daemon: s.ovsdb(n), ready: poll.Dials("unix", filepath.Join(dir, ovsSocket))},
			component{daemon: vswitchd, ready: defaultCtl(vswitchd, dir, "ovs-vswitchd")},
			component{daemon: s.nb(n), ready: poll.Dials("unix", filepath.Join(dir, nbSocket))},
			component{daemon: s.sb(n), ready: poll.Dials("unix", filepath.Join(dir, sbSocket))},
			component{daemon: northd, ready: defaultCtl(northd, dir, "ovn-northd")},
			component{daemon: controller, ready: defaultCtl(controller, dir, "ovn-controller")},
		)
	}
	cs = append(cs, component{daemon: s.forwarder(), ready: s.forwarderReady})
	for _, n := range s.Nodes {
		cs = append(cs,
			component{daemon: s.containerd(n), ready: func(ctx context.Context) error {
				_, err := s.ctr(ctx, n, "version")
				return err
			}},
			component{daemon: s.kubelet(n), ready: httpOKIn(n.Netns, "http://"+kubeletHealthz+"/healthz")},
		)
	}
	for _, n := range s.Nodes {
		cs = append(cs, component{name: n.Name + " agent pod", ready: poll.HTTPOK("http://" + n.HTTPAddress + "/readyz")})
	}
	return cs
}

// checkTimeout bounds one readiness check of Status.
const checkTimeout = 5 * time.Second

// Status checks, once, that every process runs and is ready.
func (s *Sandbox) Status(ctx context.Context) []ComponentStatus {
	var out []ComponentStatus
	for _, c := range s.components() {
		if c.daemon == nil {
			st := ComponentStatus{Name: c.name}
			checkCtx, cancel := context.WithTimeout(ctx, checkTimeout)
			if err := c.ready(checkCtx); err != nil {
				st.Problem = "not ready: " + err.Error()
			}
			cancel()
			out = append(out, st)
			continue
		}
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
