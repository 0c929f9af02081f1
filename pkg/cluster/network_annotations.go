package cluster

import (
	"fmt"
	"slices"
)

// Network annotations. OVN-Kubernetes puts them on a network's
// NetworkAttachmentDefinitions; ovnk has none and puts them on the
// ClusterUserDefinedNetwork or UserDefinedNetwork itself.
const (
	// AnnotationNetworkID is the network's id ("5"), allocated by the leader.
	AnnotationNetworkID = "k8s.ovn.org/network-id"
	// AnnotationTunnelKeys lists the tunnel keys of the network's distributed
	// datapaths, allocated by the leader.
	AnnotationTunnelKeys = "k8s.ovn.org/tunnel-keys"
)

// maxTunnelKey is the largest datapath tunnel key OVN accepts (24 bits).
const maxTunnelKey = 1<<24 - 1

// Network annotation codecs.
var (
	// NetworkIDCodec reads and writes k8s.ovn.org/network-id: a non-negative decimal
	// integer (0 is the default network's).
	NetworkIDCodec = Codec[int]{Key: AnnotationNetworkID, parse: parseID, format: formatID}
	// TunnelKeysCodec reads and writes k8s.ovn.org/tunnel-keys: a JSON array of
	// distinct integers from 1 to 2^24-1, in OVN-Kubernetes' order (see
	// Network.TunnelKeys). An empty array reads as nil.
	TunnelKeysCodec = Codec[[]int]{Key: AnnotationTunnelKeys, parse: parseTunnelKeys, format: formatTunnelKeys}
)

func parseTunnelKeys(value string) ([]int, error) {
	var keys []int
	if err := decodeJSON(value, &keys, "array"); err != nil {
		return nil, err
	}
	if err := checkTunnelKeys(keys); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return keys, nil
}

func checkTunnelKeys(keys []int) error {
	for i, k := range keys {
		if k < 1 || k > maxTunnelKey {
			return fmt.Errorf("tunnel key %d is outside 1-%d", k, maxTunnelKey)
		}
		if slices.Contains(keys[:i], k) {
			return fmt.Errorf("tunnel key %d appears twice", k)
		}
	}
	return nil
}

func formatTunnelKeys(keys []int) (string, error) {
	if err := checkTunnelKeys(keys); err != nil {
		return "", err
	}
	if keys == nil {
		keys = []int{}
	}
	return encodeJSON(keys), nil
}
