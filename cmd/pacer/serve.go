package main

import (
	"fmt"
	"math"
	"net"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/pacer-load/pacer/embedded"
	"github.com/pacer-load/pacer/internal/bytesize"
)

// serveCommand is `pacer serve`: the embedded target on its own.
func serveCommand() *cli.Command {
	return withHelp(&cli.Command{
		Name:  "serve",
		Usage: "run the embedded RESP target (with optional faults) until Ctrl-C",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "port", Value: 6379, Usage: "`PORT` to listen on (0: a free one)", Category: catServer},
			&cli.StringFlag{Name: "bind", Value: "127.0.0.1", Usage: "`ADDRESS` to listen on", Category: catServer},
			&cli.Uint64Flag{Name: "seed", Usage: "`N`: seeds delays and injected errors", DefaultText: "from the clock", Category: catServer},
			&cli.StringFlag{Name: "maxmemory", Value: "2GiB", Usage: "dataset limit in `BYTES` (2GiB, 512MB, 0: none); commands that add data beyond it get -OOM, as Redis's noeviction", Category: catServer},
			&cli.StringFlag{Name: "maxmemory-clients", Value: bytesize.Format(embedded.DefaultMaxClientMemory), Usage: "limit in `BYTES` of the buffers of all connections together (Redis's maxmemory-clients); the connection that would pass it is closed", Category: catServer},

			&cli.StringFlag{Name: "requirepass", Usage: "require `PASSWORD` of every connection (AUTH), as redis-server does", Category: catServer},
			&cli.StringFlag{Name: "user", Usage: "the ACL user `NAME` --requirepass belongs to: clients AUTH NAME PASSWORD", DefaultText: "default", Category: catServer},
		}, append(faultFlags(), embeddedTLSFlags(catServer)...)...),
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return usageErrorf("serve takes no arguments, got %q", c.Args().First())
			}
			port := c.Int("port")
			if port < 0 || port > 65535 {
				return usageErrorf("--port %d: want 0 to 65535", port)
			}
			faults, err := parseFaults(c)
			if err != nil {
				return err
			}
			maxMemory, err := bytesize.Parse(c.String("maxmemory"))
			if err != nil || maxMemory < 0 {
				return usageErrorf("--maxmemory %q: want a size such as 2GiB, 512MB or 0 (no limit)", c.String("maxmemory"))
			}
			if maxMemory == 0 {
				maxMemory = -1 // embedded.Config: negative is no limit, 0 the default
			}
			clientMemory, err := bytesize.Parse(c.String("maxmemory-clients"))
			if err != nil || clientMemory < 1 || clientMemory > math.MaxInt32 {
				return usageErrorf("--maxmemory-clients %q: want a size from 1 byte to 2GiB, such as 64MiB", c.String("maxmemory-clients"))
			}
			if c.IsSet("user") && c.String("requirepass") == "" {
				return usageErrorf("--user names the user of --requirepass: give a password too")
			}
			files, err := serverTLSFiles(c)
			if err != nil {
				return err
			}
			serverTLS, err := files.Config()
			if err != nil {
				return err
			}
			srv, err := embedded.Start(embedded.Config{Addr: net.JoinHostPort(c.String("bind"), strconv.Itoa(port)),
				Faults: faults, MaxMemory: maxMemory, MaxClientMemory: int(clientMemory), TLS: serverTLS, User: c.String("user"), Password: c.String("requirepass")})
			if err != nil {
				return failed(fmt.Errorf("listen: %w", err))
			}
			fmt.Fprintf(c.App.Writer, "pacer serve: listening on %s (%s); Ctrl-C stops\n", srv.Addr(), srv.Describe())
			<-c.Context.Done()
			srv.Close()
			fmt.Fprintf(c.App.Writer, "pacer serve: stopped after %d commands\n", srv.Processed())
			return nil
		},
	},
		"pacer serve --port 0",
		"pacer serve --port 6380 --stall 100ms --every 1s --delay exp:200us --tls-cert server.crt --tls-key server.key",
	)
}
