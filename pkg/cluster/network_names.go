package cluster

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
