package embedded

// Commands that ask the server about itself: TIME, CONFIG, INFO, COMMAND
// (LATENCY is in stats.go).

import (
	"bytes"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

func cmdTime(c *client, _ [][]byte) {
	now := time.Now()
	c.array(2)
	c.bulkString(strconv.FormatInt(now.Unix(), 10))
	c.bulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
}

// configValues are what CONFIG GET answers (persistence is off).
func (s *Server) configValues() map[string]string {
	return map[string]string{
		"save": "", "appendonly": "no", "io-threads": "1", "databases": strconv.Itoa(len(s.dbs)),
		"maxmemory":                  strconv.FormatInt(s.cfg.MaxMemory, 10),
		"maxmemory-policy":           "noeviction",
		"proto-max-bulk-len":         strconv.Itoa(maxBulkLen),
		"client-query-buffer-limit":  strconv.Itoa(s.cfg.MaxQueryBuffer),
		"client-output-buffer-limit": "normal " + strconv.Itoa(s.cfg.MaxOutputBuffer) + " 0 0",
		"maxmemory-clients":          strconv.Itoa(s.cfg.MaxClientMemory),
		"tracking-table-max-keys":    strconv.Itoa(max(s.cfg.MaxTrackedKeys, 0)),
	}
}

func cmdConfig(c *client, a [][]byte) {
	switch sub := a[1]; {
	case is(sub, "GET"):
		if len(a) < 3 {
			c.wrongArgs("config|get")
			return
		}
		values := c.srv.configValues()
		var names []string
		for _, p := range a[2:] {
			for k := range values {
				if ok, _ := path.Match(strings.ToLower(string(p)), k); ok {
					names = append(names, k)
				}
			}
		}
		sort.Strings(names)
		c.mapHeader(len(names))
		for _, k := range names {
			c.bulkString(k)
			c.bulkString(values[k])
		}
	case is(sub, "RESETSTAT"):
		clear(c.srv.stats)
		c.simple("OK")
	case is(sub, "SET"):
		c.simple("OK") // accepted and ignored: clients tune what the target does not have
	default:
		c.unknownSubcommand(sub, "CONFIG")
	}
}

// infoSections are INFO's sections, in order.
var infoSections = []string{"server", "memory", "stats", "commandstats", "keyspace"}

// cmdInfo answers INFO [section ...]: the sections named (all of them when
// none is, or for all, everything or default).
func cmdInfo(c *client, a [][]byte) {
	want := map[string]bool{}
	for _, w := range a[1:] {
		sec := strings.ToLower(string(w))
		if sec == "all" || sec == "everything" || sec == "default" {
			want = map[string]bool{}
			break
		}
		want[sec] = true
	}
	var b bytes.Buffer
	s := c.srv
	for _, sec := range infoSections {
		if len(want) > 0 && !want[sec] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		switch sec {
		case "server":
			b.WriteString("# Server\r\nredis_version:7.2.0\r\nredis_mode:standalone\r\npacer_embedded:1\r\n")
			b.WriteString("faults:" + s.cfg.Faults.String() + "\r\n")
		case "memory":
			b.WriteString("# Memory\r\nused_memory:" + strconv.FormatInt(s.used, 10) + "\r\n")
			b.WriteString("maxmemory:" + strconv.FormatInt(s.cfg.MaxMemory, 10) + "\r\nmaxmemory_policy:noeviction\r\n")
			b.WriteString("mem_clients_normal:" + strconv.FormatInt(s.clientMem.Load(), 10) + "\r\n")
		case "stats":
			b.WriteString("# Stats\r\ntotal_commands_processed:" + strconv.FormatUint(s.processed.Load(), 10) + "\r\n")
			keys, items, prefixes := s.trackingStats()
			b.WriteString("tracking_total_keys:" + strconv.Itoa(keys) + "\r\ntracking_total_items:" + strconv.Itoa(items) +
				"\r\ntracking_total_prefixes:" + strconv.Itoa(prefixes) + "\r\n")
		case "commandstats":
			s.writeCommandstats(&b)
		case "keyspace":
			b.WriteString("# Keyspace\r\n")
			for i, db := range s.dbs {
				if len(db) > 0 {
					b.WriteString("db" + strconv.Itoa(i) + ":keys=" + strconv.Itoa(len(db)) + ",expires=0,avg_ttl=0\r\n")
				}
			}
		}
	}
	c.bulk(b.Bytes())
}

// cmdCommand answers COMMAND, COMMAND COUNT, COMMAND INFO, COMMAND LIST
// and COMMAND DOCS (empty: the target has no docs) from the table.
func cmdCommand(c *client, a [][]byte) {
	if len(a) == 1 {
		c.array(len(commandTable))
		for i := range commandTable {
			c.commandInfo(&commandTable[i])
		}
		return
	}
	switch sub := a[1]; {
	case is(sub, "COUNT"):
		c.integer(int64(len(commandTable)))
	case is(sub, "LIST"):
		c.array(len(commandTable))
		for _, cmd := range commandTable {
			c.bulkString(cmd.name)
		}
	case is(sub, "INFO"):
		c.array(len(a) - 2)
		for _, name := range a[2:] {
			if i, ok := findCommand(name); ok {
				c.commandInfo(&commandTable[i])
			} else {
				c.nullArray()
			}
		}
	case is(sub, "DOCS"):
		c.mapHeader(0)
	default:
		c.unknownSubcommand(sub, "COMMAND")
	}
}

// commandInfo is one command's entry in COMMAND's reply, Redis 7's ten
// fields (ACL categories, tips, key specs and subcommands empty).
func (c *client) commandInfo(cmd *command) {
	c.array(10)
	c.bulkString(cmd.name)
	c.integer(int64(cmd.arity))
	n := 0
	for bit := range flagNames {
		if cmd.flags&(1<<bit) != 0 {
			n++
		}
	}
	c.setHeader(n)
	for bit, name := range flagNames {
		if cmd.flags&(1<<bit) != 0 {
			c.simple(name)
		}
	}
	c.integer(int64(cmd.firstKey))
	c.integer(int64(cmd.lastKey))
	c.integer(int64(cmd.step))
	c.setHeader(0)
	c.setHeader(0)
	c.array(0)
	c.array(0)
}
