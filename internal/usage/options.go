package usage

// options maps the command-line spelling of every setting an OptionError
// may name to its Go name: the field of the flags or config struct that
// holds it. A placeholder not listed here stays as it is written.
var options = map[string]string{
	"abort-after": "AbortAfter", "arrival": "Arrival", "cacert": "CACert", "cacertdir": "CACertDir",
	"cert": "Cert", "closed": "Closed", "cluster": "Cluster", "command": "Command",
	"command-weight": "CommandWeight", "commands": "Commands", "db": "DB", "decide-within": "DecideWithin", "delay": "Delay",
	"drain": "Drain", "duration": "Duration", "embedded": "Embedded", "error-rate": "ErrorRate",
	"every": "Every", "format": "Format", "from": "From", "hdr-log": "HdrLog",
	"hdr-spectrum": "HdrSpectrum", "insecure": "Insecure", "interval": "Interval", "json": "JSON",
	"key": "Key", "key-dist": "KeyDist", "key-prefix": "KeyPrefix", "label": "Label",
	"lag-limit": "LagLimit", "latency": "Latency", "loop": "Loop", "master": "Master",
	"max-backlog": "MaxBacklog", "max-buffer": "MaxBuffer", "max-inflight": "MaxInflight",
	"max-regression": "MaxRegression", "max-steps": "MaxSteps", "mix": "Mix", "pacing": "Pacing",
	"per-client": "PerClient", "percentiles": "Percentiles", "precision": "Precision",
	"rate": "Rate", "rates": "Rates", "ratio": "Ratio", "read-from": "ReadFrom", "repeat": "Repeat",
	"round-duration": "RoundDuration", "rounds": "Rounds", "search": "Search", "partial": "Partial", "seed": "Seed", "settle": "Settle", "shard": "Shard",
	"skip": "Skip", "slo": "SLO", "slo-window": "SLOWindow", "sni": "SNI", "speed": "Speed",
	"stages": "Stages", "start-at": "StartAt", "stall": "Stall", "step": "Step", "step-duration": "StepDuration",
	"timeout": "Timeout", "tls": "TLS", "tls-cert": "TLSCert", "tls-ciphers": "TLSCiphers",
	"tls-ciphersuites": "TLSCipherSuites", "tls-key": "TLSKey", "to": "To", "visibility": "Visibility",
	"wait": "Wait", "warmup": "Warmup",
	// Pub/Sub and streams.
	"channels": "Channels", "subscribers": "Subscribers", "patterns": "Patterns", "sharded": "Sharded",
	"slow-subscribers": "SlowSubscribers", "subscriber-delay": "SubscriberDelay", "channel-prefix": "ChannelPrefix",
	"streams": "Streams", "groups": "Groups", "consumers": "Consumers", "count": "Count", "block": "Block",
	"consumer-delay": "ConsumerDelay", "maxlen": "MaxLen", "stream-prefix": "StreamPrefix",
	// Client-side caching.
	"keys": "Keys", "readers": "Readers", "bcast": "BCAST",
	// redis-benchmark's one-letter flags.
	"c": "Conns", "d": "DataSize", "I": "Idle", "k": "KeepAlive", "l": "Loop", "n": "Requests", "P": "Pipeline", "r": "Keyspace",
	"t": "Tests", "u": "URI", "x": "Stdin",
}
