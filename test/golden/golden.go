// Package golden compares a test's text output with what it must be: golden files under
// testdata, rewritten by `go test … -update` (a rewrite is reviewed, never trusted), and
// a line diff that keeps order and repetition, so a reordered or duplicated line shows
// as the change it is.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files from the current output (review the diff before committing)")

// Updating reports whether the test binary runs with -update: tests that write their
// expectations elsewhere than File (a directory of pages) rewrite them then.
func Updating() bool { return *update }

// File compares got with the file at path; with -update it writes got there instead.
// A difference fails t with Diff's listing and how to rewrite the file.
func File(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it, then review it)", err)
	}
	if d := Diff(string(want), got); d != "" {
		t.Errorf("output differs from %s (run the test with -update to rewrite it, then review the diff):\n%s", path, d)
	}
}

// Diff lists how got differs from want, line by line in order: "-N: line" is line N of
// want missing from got, "+N: line" line N of got not in want; "" when they are equal.
// Lines are matched by a longest common subsequence, so a line moved or repeated is
// reported where it moved or repeats.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	return Lines(strings.Split(want, "\n"), strings.Split(got, "\n"))
}

// Lines is Diff for text already split into lines.
func Lines(want, got []string) string {
	// lcs[i][j] is the length of the longest common subsequence of want[i:] and got[j:].
	lcs := make([][]int, len(want)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(got)+1)
	}
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case i < len(want) && j < len(got) && want[i] == got[j]:
			i, j = i+1, j+1
		case j < len(got) && (i == len(want) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&b, "+%d: %s\n", j+1, got[j])
			j++
		default:
			fmt.Fprintf(&b, "-%d: %s\n", i+1, want[i])
			i++
		}
	}
	return b.String()
}
