// Package procutil is what starting local servers takes besides the processes
// themselves: a free port to give a server, a retry when another program takes that
// port first, and the end of a server's log for error messages. The demo sandbox and
// the test environment both start their servers with it.
package procutil

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// StartAttempts bounds the starts of a server whose freshly picked port another program
// took between the pick and the server's bind.
const StartAttempts = 3

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PortTaken reports whether the log of a server that exited says its address was in
// use: another start, on a new port, may then succeed.
func PortTaken(logPath string) bool {
	return strings.Contains(LogTail(logPath, 50), "address already in use")
}

// LogTail returns the last lines of a log, for error messages.
func LogTail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
