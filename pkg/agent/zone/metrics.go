package zone

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ovnk/ovnk/pkg/ovn"
)

// Metrics are the zone's Prometheus metrics.
type Metrics struct {
	duration   prometheus.Histogram
	owned      prometheus.Gauge
	operations *prometheus.CounterVec
	errors     prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ovnk_zone_reconcile_duration_seconds",
			Help:    "Time to compile the zone and apply the difference to the NB.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		owned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ovnk_zone_owned_rows",
			Help: "NB rows ovnk owned in this zone at the start of the last reconcile.",
		}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ovnk_zone_operations_total",
			Help: "NB write operations applied, by kind.",
		}, []string{"kind"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ovnk_zone_reconcile_errors_total",
			Help: "Reconciles that failed.",
		}),
	}
	reg.MustRegister(m.duration, m.owned, m.operations, m.errors)
	return m
}

func (m *Metrics) observe(d time.Duration, s ovn.Stats, err error) {
	if m == nil {
		return
	}
	m.duration.Observe(d.Seconds())
	if err != nil {
		m.errors.Inc()
		return
	}
	m.owned.Set(float64(s.Owned))
	m.operations.WithLabelValues("insert").Add(float64(s.Inserts))
	m.operations.WithLabelValues("update").Add(float64(s.Updates))
	m.operations.WithLabelValues("mutate").Add(float64(s.Mutations))
	m.operations.WithLabelValues("delete").Add(float64(s.Deletes))
}
