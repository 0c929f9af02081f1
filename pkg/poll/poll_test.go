package poll

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"
)

func TestUntilSucceedsOnceCheckDoes(t *testing.T) {
	calls := 0
	err := Until(context.Background(), time.Minute, "the third call", func(context.Context) error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("Until = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestUntilEndsAtStop(t *testing.T) {
	calls := 0
	err := Until(context.Background(), time.Minute, "etcd", func(context.Context) error {
		calls++
		return Stop(errors.New("etcd exited: exit status 1"))
	})
	if want := "waiting for etcd: etcd exited: exit status 1"; err == nil || err.Error() != want || calls != 1 {
		t.Errorf("Until = %v after %d calls, want %q after 1", err, calls, want)
	}
}

func TestUntilTimesOutWithTheLastError(t *testing.T) {
	err := Until(context.Background(), 30*time.Millisecond, "the port", func(context.Context) error {
		return errors.New("connection refused")
	})
	if want := "waited 30ms for the port: connection refused"; err == nil || err.Error() != want {
		t.Errorf("Until = %v, want %q", err, want)
	}
}

func TestUntilSaysWhenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := Until(ctx, time.Minute, "the port", func(context.Context) error {
		cancel()
		return errors.New("connection refused")
	})
	if want := "interrupted while waiting for the port: context canceled"; err == nil || err.Error() != want {
		t.Errorf("Until = %v, want %q", err, want)
	}
}

func TestDials(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "server.sock")
	if err := Dials("unix", socket)(context.Background()); err == nil {
		t.Fatal("Dials succeeded with nothing listening")
	}
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := Dials("unix", socket)(context.Background()); err != nil {
		t.Errorf("Dials with a listener: %v", err)
	}
}

func TestHTTPOK(t *testing.T) {
	ready := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !ready {
			http.Error(w, "[-]etcd failed", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	err := HTTPOK(srv.URL + "/readyz")(context.Background())
	if want := "GET " + srv.URL + "/readyz: 503 Service Unavailable: [-]etcd failed"; err == nil || err.Error() != want {
		t.Errorf("HTTPOK while not ready = %v, want %q", err, want)
	}
	ready = true
	if err := HTTPOK(srv.URL + "/readyz")(context.Background()); err != nil {
		t.Errorf("HTTPOK once ready: %v", err)
	}
}
