package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/ovnk/ovnk/pkg/podnet"
	"github.com/ovnk/ovnk/pkg/poll"
)

// requestTimeout bounds one request to the agent, which answers from memory.
const requestTimeout = 5 * time.Second

// retryable reports whether an answer may change by asking again: the agent is
// starting (or not reachable at all, as while it restarts), or the pod's allocation is
// still on its way.
func retryable(status int) bool {
	return status == http.StatusServiceUnavailable || status == http.StatusTooEarly
}

// fetchPlan asks the agent for the pod's plan, again while the answer may change, for
// up to timeout. It fails at once on a final answer (CodeAgentRefused) and with
// CodeTryAgainLater when the time is up, each error naming the pod and the agent's
// last word.
func fetchPlan(ctx context.Context, hc *http.Client, agentURL string, a Args, timeout time.Duration, logf func(string, ...any)) (podnet.Plan, error) {
	u := agentURL + podnet.PlanPath(a.PodNamespace, a.PodName)
	if a.PodUID != "" {
		u += "?uid=" + url.QueryEscape(a.PodUID)
	}
	var plan podnet.Plan
	last := ""
	err := poll.Until(ctx, timeout, "the agent's plan of pod "+a.Pod(), func(ctx context.Context) error {
		p, status, msg, err := getPlan(ctx, hc, u)
		if err != nil {
			if msg != last {
				logf("pod %s: %s", a.Pod(), msg)
				last = msg
			}
			if status != 0 && !retryable(status) {
				return poll.Stop(err)
			}
			return err
		}
		plan = p
		return nil
	})
	if err == nil {
		return plan, nil
	}
	var refused *Error
	if errors.As(err, &refused) {
		return plan, refused
	}
	return plan, &Error{Code: CodeTryAgainLater, Msg: fmt.Sprintf("no network plan for pod %s from the agent at %s within %s", a.Pod(), agentURL, timeout), Details: err.Error()}
}

// getPlan makes one request. It returns the HTTP status (0 when there was no answer)
// and, on failure, a message for the log besides the error.
func getPlan(ctx context.Context, hc *http.Client, u string) (podnet.Plan, int, string, error) {
	var plan podnet.Plan
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return plan, 0, err.Error(), err
	}
	resp, err := hc.Do(req)
	if err != nil {
		msg := "the agent does not answer: " + err.Error()
		return plan, 0, msg, errors.New(msg)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		msg := fmt.Sprintf("read the agent's answer (HTTP %d): %v", resp.StatusCode, err)
		return plan, 0, msg, errors.New(msg)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &plan); err != nil {
			msg := fmt.Sprintf("the agent's plan is not valid JSON: %v", err)
			return plan, resp.StatusCode, msg, &Error{Code: CodeAgentRefused, Msg: msg}
		}
		return plan, resp.StatusCode, "", nil
	}
	var ae podnet.Error
	if json.Unmarshal(body, &ae) != nil || ae.Message == "" {
		ae.Message = fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, body)
	}
	msg := ae.Message
	if retryable(resp.StatusCode) {
		return plan, resp.StatusCode, msg, errors.New(msg)
	}
	return plan, resp.StatusCode, msg, &Error{Code: CodeAgentRefused, Msg: msg}
}
