package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/pkg/poll"
)

// requestTimeout bounds one request to the agent, which answers from memory.
const requestTimeout = 5 * time.Second

// agentHost is the host of the plan URLs: any name does, the transport dials the
// socket whatever the URL says.
const agentHost = "ovnk-agent"

// agentClient is an HTTP client that reaches the agent over its unix socket.
func agentClient(socket string) *http.Client {
	dialer := &net.Dialer{Timeout: requestTimeout}
	return &http.Client{Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", socket)
		},
		// One request, or a few seconds apart: nothing to keep open.
		DisableKeepAlives: true,
	}}
}

// fetchPlan asks the agent at socket for the pod's plan, again while the answer may
// change, for up to timeout. It fails at once only on an answer the agent marks final
// (podnet.Retryable: CodeAgentRefused, with the agent's message); anything else — no
// answer, an answer it does not understand, "not ready", "not allocated" — is asked
// again, and when the time is up it fails with CodeTryAgainLater naming the pod and the
// agent's last word.
func fetchPlan(ctx context.Context, hc *http.Client, socket string, a Args, timeout time.Duration, logf func(string, ...any)) (podnet.Plan, error) {
	u := "http://" + agentHost + podnet.PlanPath(a.PodNamespace, a.PodName)
	if a.PodUID != "" {
		u += "?uid=" + url.QueryEscape(a.PodUID)
	}
	var plan podnet.Plan
	last := ""
	err := poll.Until(ctx, timeout, "the agent's plan of pod "+a.Pod(), func(ctx context.Context) error {
		p, final, err := getPlan(ctx, hc, u)
		switch {
		case final != nil:
			return poll.Stop(final)
		case err != nil:
			if err.Error() != last {
				logf("pod %s: %v", a.Pod(), err)
				last = err.Error()
			}
			return err
		}
		plan = p
		return nil
	})
	if err == nil {
		return plan, nil
	}
	var refused *types.Error
	if errors.As(err, &refused) {
		return plan, refused
	}
	return plan, types.NewError(CodeTryAgainLater, fmt.Sprintf("no network plan for pod %s from the agent at %s within %s", a.Pod(), socket, timeout), err.Error())
}

// getPlan makes one request. It returns the plan, or the agent's final refusal, or
// else an error saying why the answer is worth asking for again.
func getPlan(ctx context.Context, hc *http.Client, u string) (podnet.Plan, *types.Error, error) {
	var plan podnet.Plan
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return plan, types.NewError(types.ErrInternal, "build the request to the agent", err.Error()), nil
	}
	resp, err := hc.Do(req)
	if err != nil {
		return plan, nil, fmt.Errorf("the agent does not answer: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return plan, nil, fmt.Errorf("read the agent's answer (HTTP %d): %w", resp.StatusCode, err)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &plan); err != nil {
			return plan, nil, fmt.Errorf("the agent's plan (HTTP 200) is not valid JSON: %w", err)
		}
		return plan, nil, nil
	}
	var ae podnet.Error
	if json.Unmarshal(body, &ae) != nil || ae.Message == "" {
		return plan, nil, fmt.Errorf("the agent answered HTTP %d: %.200s", resp.StatusCode, body)
	}
	retry, known := podnet.Retryable(ae.Reason)
	if known && !retry {
		return plan, types.NewError(CodeAgentRefused, ae.Message, ""), nil
	}
	return plan, nil, errors.New(ae.Message)
}
