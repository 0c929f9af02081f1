package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// iniSection is one "[name]" header of an INI file and the keys below it.
type iniSection struct {
	name string
	line int
	keys []iniKey
}

// iniKey is one "name = value" line.
type iniKey struct {
	name, value string
	line        int
}

// parseINI reads the INI format of ovnkube's configuration file:
//
//   - "[section]" starts a section; a section may appear more than once.
//   - "key = value" sets a key of the current section; a key outside any section, or
//     set twice in a section, is an error. The blanks around key and value are dropped.
//   - "#" and ";" start a comment that runs to the end of the line, except inside a
//     value in double quotes, which is taken verbatim without the quotes.
//
// Section and key names are case-insensitive and returned in lower case. name is the
// file's name, used in errors ("agent.conf:7: …"). Every problem is reported, joined;
// the sections returned are those that could be read.
func parseINI(name string, data []byte) ([]iniSection, error) {
	var (
		out  []iniSection
		errs []error
		seen = map[string]int{} // "section\x00key" -> line
		// lost is set after a malformed section header: the keys below it are skipped,
		// since their section is unknown.
		lost bool
	)
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	for i, text := range strings.Split(string(data), "\n") {
		line := i + 1
		text = strings.TrimSpace(text)
		switch {
		case text == "" || text[0] == '#' || text[0] == ';':
		case text[0] == '[':
			header := stripComment(text)
			section, ok := strings.CutSuffix(header[1:], "]")
			section = strings.ToLower(strings.TrimSpace(section))
			if !ok || section == "" || strings.ContainsAny(section, "[]") {
				fail(line, "malformed section header %q: want [name]", header)
				lost = true
				continue
			}
			out = append(out, iniSection{name: section, line: line})
			lost = false
		default:
			key, value, ok := strings.Cut(text, "=")
			key = strings.ToLower(strings.TrimSpace(key))
			if !ok || key == "" {
				fail(line, "%q is neither \"key = value\" nor \"[section]\"", text)
				continue
			}
			value, err := iniValue(strings.TrimSpace(value))
			if err != nil {
				fail(line, "%s: %v", key, err)
				continue
			}
			if lost {
				continue
			}
			if len(out) == 0 {
				fail(line, "key %q is outside any section: put it below a section header such as [%s]",
					key, sectionHint(key))
				continue
			}
			s := &out[len(out)-1]
			id := s.name + "\x00" + key
			if first, dup := seen[id]; dup {
				fail(line, "duplicate key %q in [%s], first set on line %d: keep one", key, s.name, first)
				continue
			}
			seen[id] = line
			s.keys = append(s.keys, iniKey{name: key, value: value, line: line})
		}
	}
	return out, errors.Join(errs...)
}

// iniValue removes the quotes or the trailing comment of a trimmed value.
func iniValue(value string) (string, error) {
	if !strings.HasPrefix(value, `"`) {
		return stripComment(value), nil
	}
	end := strings.IndexByte(value[1:], '"') + 1
	if end == 0 {
		return "", fmt.Errorf("value %s has no closing quote", value)
	}
	if rest := strings.TrimSpace(value[end+1:]); rest != "" && rest[0] != '#' && rest[0] != ';' {
		return "", fmt.Errorf("unexpected %q after the quoted value", rest)
	}
	return value[1:end], nil
}

// stripComment cuts text at its first "#" or ";" and drops the blanks before it.
func stripComment(text string) string {
	if i := strings.IndexAny(text, "#;"); i >= 0 {
		return strings.TrimSpace(text[:i])
	}
	return text
}

// sectionHint names the section a key belongs in, or [default] for an unknown key.
func sectionHint(key string) string {
	for i := range settings {
		if settings[i].name() == key {
			return settings[i].section()
		}
	}
	return defaultSection
}

// iniCodec is a viper codec for the agent's INI file. Decoding maps each file key to
// its setting's viper key and refuses unknown sections and keys; it remembers the line
// of each key for error messages.
type iniCodec struct {
	// file names the file in errors.
	file string
	// lines maps the viper key of each setting the last decoded file set to its line.
	lines map[string]int
}

// Decode implements viper.Decoder.
func (c *iniCodec) Decode(data []byte, out map[string]any) error {
	parsed, err := parseINI(c.file, data)
	errs := []error{err}
	c.lines = map[string]int{}
	for _, section := range parsed {
		if !slices.Contains(sections, section.name) {
			errs = append(errs, fmt.Errorf("%s:%d: unknown section [%s]: the closest known section is [%s]",
				c.file, section.line, section.name, closest(section.name, sections)))
			continue
		}
		for _, key := range section.keys {
			s := lookupSetting(section.name, key.name)
			if s == nil {
				errs = append(errs, fmt.Errorf("%s:%d: unknown key %q in [%s]: the closest known key is %s",
					c.file, key.line, key.name, section.name, closestSetting(section.name, key.name)))
				continue
			}
			c.lines[s.key] = key.line
			setPath(out, s.key, key.value)
		}
	}
	return errors.Join(errs...)
}

// Encode implements viper.Encoder; the agent never writes its configuration.
func (c *iniCodec) Encode(map[string]any) ([]byte, error) {
	return nil, errors.New("writing the agent's configuration file is not supported")
}

// setPath stores value in m under a viper key, "name" or "section.name".
func setPath(m map[string]any, key string, value string) {
	section, name, nested := strings.Cut(key, ".")
	if !nested {
		m[key] = value
		return
	}
	sub, ok := m[section].(map[string]any)
	if !ok {
		sub = map[string]any{}
		m[section] = sub
	}
	sub[name] = value
}

// closestSetting returns the setting whose name is closest to name, preferring the
// given section, as "[section] name".
func closestSetting(section, name string) string {
	best, bestDist := "", -1
	for i := range settings {
		s := &settings[i]
		d := nameDistance(name, s.name())
		if s.section() != section {
			d++
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = s.String(), d
		}
	}
	return best
}

// closest returns the candidate with the least edit distance to name, the first on a tie.
func closest(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		if d := nameDistance(name, c); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// nameDistance tells how far apart two names are: 1 when one contains the other
// ("bgp" and "bgp-managed"), else their edit distance.
func nameDistance(a, b string) int {
	if a != b && (strings.Contains(a, b) || strings.Contains(b, a)) {
		return 1
	}
	return editDistance(a, b)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
