package manifests

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
	ovnkv1 "github.com/ovnk/ovnk/pkg/api/v1"
)

// The agent's permissions, least privilege for what it does; docs/install.md explains
// each. No rule has a wildcard, and none grants delete or create except on events,
// leases and the NetworkAttachmentDefinitions the leader keeps for the networks, nor
// anything on secrets or configmaps: the agent reads its config from a mounted file.

// clusterRules are the agent's cluster-wide permissions. Each call returns new slices,
// so a caller may change them.
func clusterRules() []rbacv1.PolicyRule {
	readVerbs := []string{"get", "list", "watch"}
	annotateVerbs := []string{"get", "list", "watch", "patch", "update"}
	eventVerbs := []string{"create", "patch"}
	return []rbacv1.PolicyRule{
		// Every agent writes its own node's annotations (chassis id, addresses, gateway
		// config); the leader writes allocations (node id, subnets) to every node and
		// the network annotations to every pod.
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: annotateVerbs},
		// Namespaces select networks (labels, the primary-UDN label).
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: readVerbs},
		// Events about networks, nodes and pods, through either events API.
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: eventVerbs},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: slices.Clone(eventVerbs)},
		// The intent, and the leader's allocations in its annotations.
		{
			APIGroups: []string{ovnkv1.GroupName},
			Resources: []string{
				"clusteruserdefinednetworks",
				"userdefinednetworks",
				"clusternetworkconnects",
				"egressips",
				"routeadvertisements",
			},
			Verbs: slices.Clone(annotateVerbs),
		},
		// The leader's status conditions, by update or by server-side apply (a patch) with
		// its field manager. EgressIP has no status subresource: upstream's controller
		// writes its status.items with ordinary updates, which the rule above allows.
		{
			APIGroups: []string{ovnkv1.GroupName},
			Resources: []string{
				"clusteruserdefinednetworks/status",
				"userdefinednetworks/status",
				"clusternetworkconnects/status",
				"routeadvertisements/status",
			},
			Verbs: []string{"patch", "update"},
		},
		// The leader writes each network's NetworkAttachmentDefinitions, as upstream's
		// cluster manager does, and deletes those of networks and namespaces gone.
		{
			APIGroups: []string{nadv1.GroupName},
			Resources: []string{nadv1.Resource},
			Verbs:     []string{"get", "list", "watch", "create", "patch", "update", "delete"},
		},
		// A NAD's owner reference blocks its network's deletion (blockOwnerDeletion), which
		// API servers enforcing owner-reference permissions allow only to a writer that
		// may update the owner's finalizers.
		{
			APIGroups: []string{ovnkv1.GroupName},
			Resources: []string{"clusteruserdefinednetworks/finalizers", "userdefinednetworks/finalizers"},
			Verbs:     []string{"update"},
		},
	}
}

func (o AgentOptions) clusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: AgentName, Labels: o.labels()},
		Rules:      clusterRules(),
	}
}

func (o AgentOptions) clusterRoleBinding() *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: AgentName, Labels: o.labels()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AgentName},
		Subjects:   []rbacv1.Subject{o.subject()},
	}
}

// role holds the agent's permissions inside its namespace: the leader-election Lease
// and each agent's heartbeat Lease (pkg/agent/heartbeat). Leases elsewhere, and
// anything else in the namespace, stay out of reach.
func (o AgentOptions) role() *rbacv1.Role {
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: o.meta(AgentName),
		Rules: []rbacv1.PolicyRule{
			// What client-go's leader election does with its Lease, and the heartbeat
			// with its own: read, create the first time, renew.
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
		},
	}
}

func (o AgentOptions) roleBinding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: o.meta(AgentName),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: AgentName},
		Subjects:   []rbacv1.Subject{o.subject()},
	}
}

// subject is the agent's ServiceAccount.
func (o AgentOptions) subject() rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: AgentName, Namespace: o.Namespace}
}
