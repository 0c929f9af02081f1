package networkcmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
	"github.com/ovnk/ovnk/pkg/cli/clitest"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestListWatchOutlivesAFailedLook: while -w follows the networks, a look beside
// them (here the nodes, once the user may no longer list them) that fails is a
// warning, not the end of the watch, as kubectl get -w goes on: the changed network's
// row still comes, and so do the next ones.
func TestListWatchOutlivesAFailedLook(t *testing.T) {
	h := newHarness(t)
	ns := h.Namespace("", nil)
	user := "watcher-" + ns
	grant := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRoleBinding {
		h.Create(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules})
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		}
		h.Create(b)
		return b
	}
	read := []string{"get", "list", "watch"}
	grant(user+"-networks",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{ovnkv1.GroupName}, Resources: []string{"clusteruserdefinednetworks", "userdefinednetworks", "clusternetworkconnects"}, Verbs: read})
	nodes := grant(user+"-nodes", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: read})

	h.Create(secondaryUDN(ns, "first", nil))
	w := h.Start(clitest.Terminal{}, "list", "-n", ns, "-w", "--as", user)
	w.Await(t, ns+"/first ", 1)

	if err := h.C.Delete(h.Ctx(), nodes); err != nil {
		t.Fatal(err)
	}
	// The authorizer sees the binding go a moment later: a plain list, which needs
	// the nodes, fails once it has.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := testenv.Eventually(ctx, 30*time.Second, "list nodes forbidden to "+user, func(context.Context) error {
		if _, _, err := h.Run("list", "-n", ns, "--as", user); err == nil || !strings.Contains(err.Error(), "nodes") {
			return fmt.Errorf("network list as %s: %v", user, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	h.Create(secondaryUDN(ns, "second", nil))
	w.Await(t, ns+"/second ", 1)
	h.Create(secondaryUDN(ns, "third", nil))
	w.Await(t, ns+"/third ", 1)
	w.Stop(t)
	if errOut := w.ErrOut.String(); strings.Count(errOut, "Warning: ") != 2 || !strings.Contains(errOut, ns+"/second's row shows the zones and connects read before") {
		t.Errorf("stderr %q, want a warning for each row shown from what was read before", errOut)
	}
}
