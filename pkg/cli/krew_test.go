package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// TestKrewManifestRenders renders deploy/krew/ovnk.yaml as krew-release-bot would and
// checks that it is a plugin manifest serving every platform scripts/dist.sh builds, with
// archive names dist.sh writes.
func TestKrewManifestRenders(t *testing.T) {
	src, err := os.ReadFile("../../deploy/krew/ovnk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const tag = "v1.2.3"
	funcs := template.FuncMap{"addURIAndSha": func(uri, tag string) string {
		// The bot renders the inner {{ .TagName }} and adds the archive's digest.
		return fmt.Sprintf("uri: %s\n    sha256: %s", strings.ReplaceAll(uri, "{{ .TagName }}", tag), strings.Repeat("ab", 32))
	}}
	tmpl, err := template.New("krew").Funcs(funcs).Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, map[string]string{"TagName": tag}); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version   string `json:"version"`
			Platforms []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI    string `json:"uri"`
				SHA256 string `json:"sha256"`
				Bin    string `json:"bin"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("rendered manifest does not parse: %v\n%s", err, out.String())
	}
	if m.Kind != "Plugin" || m.Metadata.Name != "ovnk" || m.Spec.Version != tag {
		t.Errorf("header: kind %q name %q version %q", m.Kind, m.Metadata.Name, m.Spec.Version)
	}
	dist, err := os.ReadFile("../../scripts/dist.sh")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, p := range m.Spec.Platforms {
		osName, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		platform := osName + "/" + arch
		served[platform] = true
		want := fmt.Sprintf("kubectl-ovnk_%s_%s_%s.tar.gz", tag, osName, arch)
		if path.Base(p.URI) != want || p.Bin != "kubectl-ovnk" || len(p.SHA256) != 64 {
			t.Errorf("%s: uri %q bin %q sha256 %q, want archive %s, bin kubectl-ovnk and a digest", platform, p.URI, p.Bin, p.SHA256, want)
		}
		if !strings.Contains(string(dist), platform) {
			t.Errorf("%s is in the manifest but scripts/dist.sh does not build it", platform)
		}
	}
	if len(served) != 4 {
		t.Errorf("manifest serves %d platforms, want 4: %v", len(served), served)
	}
}
