package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/ovnk/ovnk/pkg/poll"
	"github.com/ovnk/ovnk/pkg/procutil"
)

// waitStarted polls check for a daemon this invocation just started, and gives up as
// soon as the daemon exits; the error then ends with the daemon's last log lines.
func waitStarted(ctx context.Context, d *daemon, timeout time.Duration, what string, check func(context.Context) error) error {
	err := poll.Until(ctx, timeout, what, func(ctx context.Context) error {
		if err := d.exitedEarly(); err != nil {
			return poll.Stop(err)
		}
		return check(ctx)
	})
	if err != nil && ctx.Err() == nil { // not when interrupted: the log would not say why
		return fmt.Errorf("%w\nlast lines of %s:\n%s", err, d.logFile, procutil.LogTail(d.logFile, 30))
	}
	return err
}
