package cluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// AnnotationLayer2GatewayTunnelIDs maps each primary Layer2 network to the tunnel key
// of the node's gateway router port on that network's switch ({"<network>": "5"}).
// The leader allocates it from the network's pod tunnel ids, so the two never collide.
// The legacy Layer2 topology keys its "stor-GR_…" ports with it, and a node that has
// moved to the transit-router topology keeps answering on it (the "-upgrade" port)
// while other nodes still use the legacy topology.
const AnnotationLayer2GatewayTunnelIDs = "k8s.ovn.org/udn-layer2-node-gateway-router-lrp-tunnel-ids"

// maxPortTunnelKey is the largest tunnel key OVN accepts for a logical port (15 bits).
const maxPortTunnelKey = 1<<15 - 1

// Layer2GatewayTunnelIDsCodec reads and writes k8s.ovn.org/udn-layer2-node-gateway-
// router-lrp-tunnel-ids: a JSON object of network name to a decimal string from 1 to
// 32767, as OVN-Kubernetes writes it.
var Layer2GatewayTunnelIDsCodec = Codec[map[string]int]{Key: AnnotationLayer2GatewayTunnelIDs, parse: parseGatewayTunnelIDs, format: formatGatewayTunnelIDs}

// GatewayTunnelIDsOf reads a node's k8s.ovn.org/udn-layer2-node-gateway-router-lrp-
// tunnel-ids entry by entry: it returns every valid entry, and an *ObjectError naming
// the entries it dropped (or the value, if it is not a JSON object). An unset
// annotation gives nil and no error.
func GatewayTunnelIDsOf(ref ObjectRef, annotations map[string]string) (map[string]int, error) {
	value, ok := annotations[AnnotationLayer2GatewayTunnelIDs]
	if !ok {
		return nil, nil
	}
	ids, err := gatewayTunnelEntries(value)
	if err != nil {
		return ids, &ObjectError{Object: ref, Annotation: AnnotationLayer2GatewayTunnelIDs, Err: err}
	}
	return ids, nil
}

// parseGatewayTunnelIDs is the codec's strict parse: any bad entry fails the value.
func parseGatewayTunnelIDs(value string) (map[string]int, error) {
	ids, err := gatewayTunnelEntries(value)
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// gatewayTunnelEntries parses the value entry by entry. It returns the valid entries,
// and an error naming the others, or the value if it is not a JSON object.
func gatewayTunnelEntries(value string) (map[string]int, error) {
	var raw map[string]json.RawMessage
	if err := decodeJSON(value, &raw, "object of network name to tunnel id"); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(raw))
	var bad []string
	for _, network := range slices.Sorted(maps.Keys(raw)) {
		var s string
		err := json.Unmarshal(raw[network], &s)
		id := 0
		if err == nil {
			id, err = parsePortTunnelID(s)
		} else {
			err = fmt.Errorf("%s is not a JSON string", quote(string(raw[network])))
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("network %q: %v", network, err))
			continue
		}
		out[network] = id
	}
	if len(bad) > 0 {
		return out, fmt.Errorf("entries left out: %s", strings.Join(bad, "; "))
	}
	return out, nil
}

func formatGatewayTunnelIDs(ids map[string]int) (string, error) {
	raw := make(map[string]string, len(ids))
	for network, id := range ids {
		s, err := formatPortTunnelID(id)
		if err != nil {
			return "", fmt.Errorf("network %q: %w", network, err)
		}
		raw[network] = s
	}
	return encodeJSON(raw), nil
}

func parsePortTunnelID(s string) (int, error) {
	id, err := strconv.Atoi(s)
	if err != nil || id < 1 || id > maxPortTunnelKey {
		return 0, fmt.Errorf("%s is not a port tunnel key (an integer from 1 to %d)", quote(s), maxPortTunnelKey)
	}
	return id, nil
}

func formatPortTunnelID(id int) (string, error) {
	if id < 1 || id > maxPortTunnelKey {
		return "", fmt.Errorf("port tunnel key %d is outside 1-%d", id, maxPortTunnelKey)
	}
	return strconv.Itoa(id), nil
}
