package golden

import "testing"

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name, want, got, diff string
	}{
		{"equal", "a\nb", "a\nb", ""},
		{"changed", "a\nb\nc", "a\nB\nc", "+2: B\n-2: b\n"},
		{"moved", "a\nb\nc", "b\nc\na", "-1: a\n+3: a\n"},
		{"duplicated", "a\nb", "a\nb\nb", "+3: b\n"},
		{"one copy gone", "x\nx\ny", "x\ny", "-2: x\n"},
		{"missing end", "a\nb\n", "a\nb", "-3: \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Diff(tc.want, tc.got); got != tc.diff {
				t.Errorf("Diff(%q, %q) = %q, want %q", tc.want, tc.got, got, tc.diff)
			}
		})
	}
}
