package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// DefaultConfigFile is the configuration file read when neither --config nor
// OVNK_CONFIG names one; unlike a named file, it may be missing.
const DefaultConfigFile = "/etc/ovnk/agent.conf"

// configFlag is the flag naming the configuration file, and configEnv its variable.
const (
	configFlag = "config"
	configEnv  = "OVNK_CONFIG"
)

// AddFlags registers --config and a flag for every setting on fs. A flag's value is
// checked when it is parsed, so fs.Parse reports a malformed number, duration, CIDR or
// address; the rules between settings are checked by Load.
func AddFlags(fs *pflag.FlagSet) {
	fs.String(configFlag, DefaultConfigFile,
		"the agent's configuration file (INI, as ovnkube's); empty reads none (env "+configEnv+")")
	for i := range settings {
		s := &settings[i]
		env := strings.Join(append([]string{s.envVar()}, s.env...), ", ")
		f := fs.VarPF(&flagValue{s: s, text: s.def}, s.flag(), "", s.usage+" (env "+env+")")
		if s.typeName() == "bool" {
			f.NoOptDefVal = "true"
		}
	}
}

// flagValue is a setting's pflag.Value: the text as given, checked by parsing it.
type flagValue struct {
	s    *setting
	text string
}

func (f *flagValue) String() string { return f.text }
func (f *flagValue) Type() string   { return f.s.typeName() }

func (f *flagValue) Set(text string) error {
	if err := parse(f.s.field(new(Config)), text); err != nil {
		return err
	}
	f.text = text
	return nil
}

// Load builds the agent's Config from, in increasing precedence: the defaults, the
// configuration file, the environment and the flags of fs, which must have been
// registered with AddFlags and parsed. getenv reads the environment (os.Getenv when
// nil); an empty variable counts as unset.
//
// The file is --config, else OVNK_CONFIG, else DefaultConfigFile, which alone may be
// missing. Every setting is read from OVNK_<KEY>, e.g. OVNK_MTU or
// OVNK_NO_OVERLAY_ROUTING; the node name also from NODE_NAME, after OVNK_NODE_NAME;
// the Lease's namespace defaults to POD_NAMESPACE when that is set.
//
// A file that cannot be read, or has malformed lines or unknown sections or keys, fails
// Load with every such problem (each with its line, and the closest known name for an
// unknown one). Otherwise Load reports every malformed value and everything Validate
// finds, joined, each naming the setting, its value and where the value came from.
func Load(fs *pflag.FlagSet, getenv func(string) string) (*Config, error) {
	return loadFrom(fs, getenv, nil)
}

// LoadText loads as Load does, but with text as the configuration file, named source
// in errors: a file that is not on disk, such as the agent's ConfigMap as kubectl ovnk
// reads it. --config and OVNK_CONFIG are ignored.
func LoadText(fs *pflag.FlagSet, getenv func(string) string, text, source string) (*Config, error) {
	return loadFrom(fs, getenv, &configText{data: []byte(text), name: source})
}

// configText is a configuration file's content and the name errors give it.
type configText struct {
	data []byte
	name string
}

// loadFrom is Load, with the file's content given (text) or read (nil).
func loadFrom(fs *pflag.FlagSet, getenv func(string) string, text *configText) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	codec := &iniCodec{}
	codecs := viper.NewCodecRegistry()
	if err := codecs.RegisterCodec("ini", codec); err != nil {
		return nil, err
	}
	v := viper.NewWithOptions(viper.WithCodecRegistry(codecs))
	v.SetConfigType("ini")

	// source tells where each setting's value comes from, for error messages; it is
	// filled in the order of precedence, like viper's layers.
	source := map[string]string{}
	for _, s := range settings {
		def, from := s.def, "default"
		if val := getenv(s.defEnv); s.defEnv != "" && val != "" {
			def, from = val, "default from "+s.defEnv
		}
		v.SetDefault(s.key, def)
		source[s.key] = from
	}
	if text == nil {
		var err error
		if text, err = readFile(fs, getenv); err != nil {
			return nil, err
		}
	}
	if text != nil {
		codec.file = text.name
		if err := v.ReadConfig(bytes.NewReader(text.data)); err != nil {
			// Drop viper's "While parsing config:" wrapper: our errors name the file.
			if pe := (viper.ConfigParseError{}); errors.As(err, &pe) {
				err = pe.Unwrap()
			}
			return nil, err
		}
	}
	for key, line := range codec.lines {
		source[key] = fmt.Sprintf("from %s:%d", codec.file, line)
	}
	if err := mergeEnv(v, getenv, source); err != nil {
		return nil, err
	}
	if err := bindFlags(v, fs, source); err != nil {
		return nil, err
	}
	return decode(v, source)
}

// mergeEnv adds the settings' environment variables to v. Viper reads variables only
// through os.Getenv, so they join its configuration layer, over the file's values and
// below the flags.
func mergeEnv(v *viper.Viper, getenv func(string) string, source map[string]string) error {
	env := map[string]any{}
	for _, s := range settings {
		for _, name := range append([]string{s.envVar()}, s.env...) {
			if val := getenv(name); val != "" {
				setPath(env, s.key, val)
				source[s.key] = "from " + name
				break
			}
		}
	}
	return v.MergeConfigMap(env)
}

// bindFlags binds every setting's flag to v; only flags that were set override.
func bindFlags(v *viper.Viper, fs *pflag.FlagSet, source map[string]string) error {
	for _, s := range settings {
		f := fs.Lookup(s.flag())
		if f == nil {
			return fmt.Errorf("flag --%s is not registered: call AddFlags on the flag set", s.flag())
		}
		if err := v.BindPFlag(s.key, f); err != nil {
			return err
		}
		if f.Changed {
			source[s.key] = "from --" + s.flag()
		}
	}
	return nil
}

// decode parses every setting's value from v and validates the result.
func decode(v *viper.Viper, source map[string]string) (*Config, error) {
	c := &Config{}
	var errs []error
	failed := map[string]bool{}
	for _, s := range settings {
		text := v.GetString(s.key)
		if err := parse(s.field(c), text); err != nil {
			errs = append(errs, &settingError{key: s.key, value: text, source: source[s.key], problem: err.Error()})
			failed[s.key] = true
			// Keep the default, so the checks of other settings against it stay sensible.
			_ = parse(s.field(c), s.def)
		}
	}
	// A setting that did not parse has been reported; its checks would only repeat that.
	for _, err := range c.validate() {
		if !failed[err.key] {
			err.source = source[err.key]
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// readFile reads the configuration file, if any; nil when there is none.
func readFile(flags *pflag.FlagSet, getenv func(string) string) (*configText, error) {
	f := flags.Lookup(configFlag)
	if f == nil {
		return nil, fmt.Errorf("flag --%s is not registered: call AddFlags on the flag set", configFlag)
	}
	path, named := f.Value.String(), f.Changed
	if val := getenv(configEnv); val != "" && !f.Changed {
		path, named = val, true
	}
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !named {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the configuration file: %w", err)
	}
	return &configText{data: data, name: path}, nil
}
