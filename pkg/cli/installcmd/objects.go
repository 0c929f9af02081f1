package installcmd

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ovnk/ovnk/pkg/cli/cmdutil"
	"github.com/ovnk/ovnk/pkg/manifests"
)

// imageReference is an OCI image reference as the distribution project's grammar has
// it: [registry[:port]/]path[:tag][@digest], the path in lower case.
var imageReference = func() *regexp.Regexp {
	const (
		alnum           = `[a-z0-9]+`
		separator       = `(?:[._]|__|-+)`
		pathComponent   = alnum + `(?:` + separator + alnum + `)*`
		domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		domain          = domainComponent + `(?:\.` + domainComponent + `)*(?::[0-9]+)?`
		name            = `(?:` + domain + `/)?` + pathComponent + `(?:/` + pathComponent + `)*`
		tag             = `[\w][\w.-]{0,127}`
		digest          = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^` + name + `(?::` + tag + `)?(?:@` + digest + `)?$`)
}()

// checkImage refuses what no registry would accept, before anything is sent.
func checkImage(image string) error {
	if image == "" || (imageReference.MatchString(image) && len(image) <= 255) {
		return nil
	}
	return fmt.Errorf("--image %q is not an image reference: use [REGISTRY/]REPOSITORY[:TAG][@DIGEST] with a lower-case repository, e.g. %s:v1.0.0",
		image, manifests.DefaultImageRepository)
}

// readAgentConfig reads the agent's config file from path and checks it as the agent
// will when it starts, with what the DaemonSet adds (cmdutil.LoadAgentConfig), so that
// a mistake is refused here rather than in a crash-looping pod.
func readAgentConfig(path, namespace string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the agent config: %w", err)
	}
	if _, err := cmdutil.LoadAgentConfig(string(data), path, namespace); err != nil {
		return "", fmt.Errorf("the agent config %s is not valid: %s (docs/agent-config.md lists every setting)", path, oneLine(err.Error()))
	}
	return string(data), nil
}

// manifestObjects returns what install writes, in order: the k8s.ovn.org CRDs (applied),
// the shared CRDs (created only when absent, manifests.SharedCRDs), then the agent's
// objects (applied).
func manifestObjects(opts manifests.AgentOptions) (crds, shared, agent []*unstructured.Unstructured, err error) {
	typedCRDs, err := manifests.CRDs()
	if err != nil {
		return nil, nil, nil, err
	}
	typedShared, err := manifests.SharedCRDs()
	if err != nil {
		return nil, nil, nil, err
	}
	agentObjs, err := manifests.Agent(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if crds, err = toUnstructured(typedCRDs); err != nil {
		return nil, nil, nil, err
	}
	if shared, err = toUnstructured(typedShared); err != nil {
		return nil, nil, nil, err
	}
	if agent, err = toUnstructured(agentObjs); err != nil {
		return nil, nil, nil, err
	}
	return crds, shared, agent, nil
}

// toUnstructured converts typed objects for the generic client.
func toUnstructured[T client.Object](objs []T) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		u, err := manifests.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// displayName names obj as kubectl does in its messages: kind.group/name, in lower case.
func displayName(obj client.Object) string {
	gvk := obj.GetObjectKind().GroupVersionKind()
	kind := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	return kind + "/" + obj.GetName()
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
