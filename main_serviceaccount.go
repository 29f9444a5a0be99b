package main

import (
	"github.com/urfave/cli/v2"

	"platd/config"
)

// serviceAccountFlags are the service-account token flags of `platd serve`.
func serviceAccountFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "service-account-issuer", Usage: "issuer of service-account tokens (repeatable: the first signs, all are accepted; default https://<API service name>.default.svc.cluster.local)"},
		&cli.StringSliceFlag{Name: "service-account-key-file", Usage: "PEM file of RSA or ECDSA public or private keys that verify service-account tokens (repeatable)"},
		&cli.StringFlag{Name: "service-account-signing-key-file", Usage: "PEM private key that signs service-account tokens (default: a key generated in the data directory)"},
		&cli.StringFlag{Name: "service-account-jwks-uri", Usage: "jwks_uri of the issuer discovery document (https; default: this server's /openid/v1/jwks)"},
		&cli.DurationFlag{Name: "service-account-max-token-expiration", Usage: "longest lifetime a TokenRequest may ask for (0: no cap)"},
		&cli.StringSliceFlag{Name: "api-audiences", Usage: "audiences of the API (repeatable or comma-separated; default: the service-account issuers)"},
		&cli.BoolFlag{Name: "service-account-lookup", Value: true, Usage: "check that a legacy token's secret and service account still exist"},
		&cli.BoolFlag{Name: "service-account-extend-token-expiration", Value: true, Usage: "pod-bound tokens requested for 3607 s live a year and warn after the hour"},
	}
}

// serviceAccountOptions reads the flags of serviceAccountFlags.
func serviceAccountOptions(c *cli.Context) config.ServiceAccountOptions {
	return config.ServiceAccountOptions{
		Issuers:                 c.StringSlice("service-account-issuer"),
		KeyFiles:                c.StringSlice("service-account-key-file"),
		SigningKeyFile:          c.String("service-account-signing-key-file"),
		JWKSURI:                 c.String("service-account-jwks-uri"),
		MaxTokenExpiration:      c.Duration("service-account-max-token-expiration"),
		APIAudiences:            c.StringSlice("api-audiences"),
		NoLookup:                !c.Bool("service-account-lookup"),
		NoExtendTokenExpiration: !c.Bool("service-account-extend-token-expiration"),
	}
}
