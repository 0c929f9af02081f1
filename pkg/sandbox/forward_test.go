package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/procutil"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestForwarder carries HTTP both ways between the host's loopback and a network
// namespace: into it (as the API server reaches the agents' nodes) and out of it (as
// the agents' HTTP endpoints reach the host), and shows the listener made inside the
// namespace stays there.
func TestForwarder(t *testing.T) {
	testenv.NeedBinaries(t, "curl")
	ns := testenv.NewNetns(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// On the host: a server the namespace should reach at its own 127.0.0.1:<inPort>.
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host saw %s\n", r.URL.Path)
	}))
	defer host.Close()
	// In the namespace: a server the host should reach at 127.0.0.1:<outPort>.
	const nsPort = "9476"
	// Served from this process through a listener made inside the namespace (listenIn,
	// as the forwarder makes its own): nothing but the namespace's loopback reaches it.
	nsListener, err := listenIn(ns.Name, "127.0.0.1:"+nsPort)
	if err != nil {
		t.Fatal(err)
	}
	nsServer := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "namespace saw %s\n", r.URL.Path)
	})}
	go func() { _ = nsServer.Serve(nsListener) }()
	defer nsServer.Close()
	inPort, err := procutil.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	outPort, err := procutil.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	inAddr := "127.0.0.1:" + strconv.Itoa(inPort)
	outAddr := "127.0.0.1:" + strconv.Itoa(outPort)
	forwards := []Forward{
		{ListenNetns: ns.Name, Listen: inAddr, Dial: strings.TrimPrefix(host.URL, "http://")},
		{Listen: outAddr, DialNetns: ns.Name, Dial: "127.0.0.1:" + nsPort},
	}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- serveForwards(fctx, ForwarderConfig{Forwards: forwards}, log.New(testWriter{t}, "forwarder: ", 0))
	}()

	// Into the namespace: curl runs there and talks to its own loopback.
	var body string
	err = testenv.Eventually(ctx, 10*time.Second, "curl in the namespace through the forwarder", func(ctx context.Context) error {
		body, err = ns.Exec(ctx, "curl", "-sS", "--max-time", "2", "http://"+inAddr+"/into")
		return err
	})
	if err != nil || body != "host saw /into\n" {
		t.Errorf("into the namespace: %v, body %q, want %q", err, body, "host saw /into\n")
	}
	// The listener is the namespace's: on the host nothing listens at that address.
	if c, err := net.DialTimeout("tcp", inAddr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s answers on the host: the forwarder's listener leaked out of %s", inAddr, ns.Name)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s on the host: %v, want connection refused", inAddr, err)
	}

	// Out of the namespace: a plain GET on the host.
	err = testenv.Eventually(ctx, 15*time.Second, "GET through the forwarder into "+ns.Name, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+outAddr+"/out", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err
	})
	if err != nil || body != "namespace saw /out\n" {
		t.Errorf("out of the namespace: %v, body %q, want %q", err, body, "namespace saw /out\n")
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("forwarder ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the forwarder did not stop with its context")
	}
}

// A forward whose address cannot be bound fails the whole forwarder, naming it, before
// anything is served.
func TestForwarderBindFailure(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	f := Forward{Listen: taken.Addr().String(), Dial: "127.0.0.1:1"}
	err = serveForwards(context.Background(), ForwarderConfig{Forwards: []Forward{f}}, log.New(io.Discard, "", 0))
	// procutil.PortTaken looks for "address already in use" in the forwarder's log: the
	// sandbox retries with new ports only when the error says so.
	if err == nil || !strings.Contains(err.Error(), f.String()) || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("forwarder on a taken address: %v, want an error naming %s and saying the address is in use", err, f)
	}
}

// TestWhoAmI answers with the caller's address.
func TestWhoAmI(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveWhoAmI(ctx, l, log.New(io.Discard, "", 0)) }()
	resp, err := http.Get("http://" + l.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != "127.0.0.1\n" {
		t.Errorf("who-am-i answered %q (%v), want %q", body, err, "127.0.0.1\n")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("who-am-i ended with %v", err)
	}
}
