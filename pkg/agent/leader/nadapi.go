package leader

import (
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"

	nadv1 "github.com/ovnk/ovnk/pkg/api/nad/v1"
)

// nadRecheck is how often the leader asks again whether the API server serves
// NetworkAttachmentDefinitions while it does not: their CRD may come any time (with
// Multus, for one).
const nadRecheck = time.Minute

// nadAPI says whether passes read and write NetworkAttachmentDefinitions: once the API
// server serves them, and the leader watches them. Without their CRD the leader serves
// the networks all the same, without NADs, and says so once.
type nadAPI struct {
	// served asks the API server whether it serves NADs.
	served func() (bool, error)
	// watch starts the leader's watch of NADs, which its cache then lists.
	watch func() error
	now   func() time.Time
	log   logr.Logger

	watching bool
	// next is when to ask again while NADs are not served.
	next time.Time
	// saidAbsent says that the absence was logged.
	saidAbsent bool
}

// available reports whether this pass reads and writes NADs. While they are not
// served it asks the API server again at most every nadRecheck, and the first time
// they are, it starts the watch.
func (a *nadAPI) available() bool {
	if a.watching {
		return true
	}
	if a.now().Before(a.next) {
		return false
	}
	a.next = a.now().Add(nadRecheck)
	ok, err := a.served()
	switch {
	case err != nil:
		a.log.Error(err, "cannot tell whether NetworkAttachmentDefinitions are served; asking again later", "in", nadRecheck)
		return false
	case !ok:
		if !a.saidAbsent {
			a.log.Info("NetworkAttachmentDefinitions are not served (no CRD network-attachment-definitions.k8s.cni.cncf.io): the networks get no NADs until they are; install Multus or that CRD",
				"recheck", nadRecheck)
			a.saidAbsent = true
		}
		return false
	}
	if err := a.watch(); err != nil {
		a.log.Error(err, "cannot watch NetworkAttachmentDefinitions; trying again later", "in", nadRecheck)
		return false
	}
	a.watching = true
	a.log.Info("NetworkAttachmentDefinitions are served: the leader keeps the networks' NADs")
	return true
}

// nadsServedBy asks the API server, through d, whether it serves NADs.
func nadsServedBy(d discovery.DiscoveryInterface) func() (bool, error) {
	return func() (bool, error) {
		list, err := d.ServerResourcesForGroupVersion(nadv1.SchemeGroupVersion.String())
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, r := range list.APIResources {
			if r.Name == nadv1.Resource {
				return true, nil
			}
		}
		return false, nil
	}
}
