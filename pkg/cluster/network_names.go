package cluster

// ConditionNetworkReady is the condition the leader sets on a network's object beside
// NetworkCreated: True when every node's zone reports the network programmed.
// kubectl ovnk network create --wait waits for it.
const ConditionNetworkReady = "NetworkReady"

// LabelPrimaryUDN marks a namespace whose pods must have a primary user-defined network:
// its pods wait for one instead of getting the default network as their primary.
// OVN-Kubernetes serves a primary network only in namespaces created with it.
const LabelPrimaryUDN = "k8s.ovn.org/primary-user-defined-network"

// NetworkNameOf returns the network a ClusterUserDefinedNetwork or UserDefinedNetwork
// object defines, and "" for any other object.
func NetworkNameOf(ref ObjectRef) string {
	switch ref.Kind {
	case "ClusterUserDefinedNetwork":
		return CUDNNetworkName(ref.Name)
	case "UserDefinedNetwork":
		return UDNNetworkName(ref.Namespace, ref.Name)
	}
	return ""
}
