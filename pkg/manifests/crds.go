// Package manifests holds the Kubernetes objects ovnk installs: the CRDs generated from
// pkg/api/v1 and pkg/api/nad/v1 (by `make generate`), embedded, and the agent's
// namespace, RBAC, config and DaemonSet (Agent, AgentYAML; docs/install.md).
package manifests

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed crds/*.yaml sharedcrds/*.yaml
var crdFiles embed.FS

// CRDs returns the CustomResourceDefinitions of the k8s.ovn.org API, sorted by name.
// ovnk owns them: install applies them and uninstall deletes them.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return embeddedCRDs("crds")
}

// SharedCRDs returns the CustomResourceDefinitions of APIs that other projects define
// and ovnk writes objects of, sorted by name: Multus' NetworkAttachmentDefinition
// (network-attachment-definitions.k8s.cni.cncf.io), whose objects the leader writes for
// every network. Multus or a distribution may have installed one already, with a schema
// of its own: a shared CRD is created only when absent, never updated, and never
// deleted by ovnk, since deleting it would delete every other project's objects of its
// kind too.
func SharedCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return embeddedCRDs("sharedcrds")
}

// embeddedCRDs decodes the CRDs embedded under dir, sorted by name.
func embeddedCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(crdFiles, dir+"/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list embedded CRDs: %w", err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		data, err := crdFiles.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read embedded CRD %s: %w", name, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decode embedded CRD %s: %w", path.Base(name), err)
		}
		crds = append(crds, crd)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds, nil
}
