package rows

// External-ID keys that mark a row as ovnk's and name it. The keys are OVN-Kubernetes'
// own, so tools that understand upstream's rows understand ours.
const (
	OwnerControllerKey = "k8s.ovn.org/owner-controller"
	OwnerTypeKey       = "k8s.ovn.org/owner-type"
	NetworkKey         = "k8s.ovn.org/network"
	TopologyKey        = "k8s.ovn.org/topology"
	NodeKey            = "k8s.ovn.org/node"
	IDKey              = "k8s.ovn.org/id"

	// OwnerController marks a row as ovnk's: ovnk changes and deletes only rows that
	// carry it, and leaves every other row alone.
	OwnerController = "ovnk"
)

// Owned reports whether a row with these external IDs is ovnk's.
func Owned(externalIDs map[string]string) bool {
	return externalIDs[OwnerControllerKey] == OwnerController
}
