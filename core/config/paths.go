package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// HomeEnv names the variable that relocates the Reasonix home directory.
const HomeEnv = "REASONIX_HOME"

// ProjectFileName is the name of the per-project config file.
const ProjectFileName = "reasonix.toml"

// Home returns the Reasonix home directory, which holds config.toml, .env,
// sessions and archives: $REASONIX_HOME when set, %AppData%\reasonix on
// Windows and ~/.reasonix elsewhere. It does not create the directory.
func Home() (string, error) {
	return HomeFrom(os.Getenv)
}

// HomeFrom is Home with the environment read through getenv.
func HomeFrom(getenv func(string) string) (string, error) {
	return home(runtime.GOOS, getenv, os.UserHomeDir)
}

func home(goos string, getenv func(string) string, userHome func() (string, error)) (string, error) {
	if h := getenv(HomeEnv); h != "" {
		return h, nil
	}
	if goos == "windows" {
		appData := getenv("AppData")
		if appData == "" {
			return "", errors.New("find reasonix home: %AppData% is not set")
		}
		return filepath.Join(appData, "reasonix"), nil
	}
	h, err := userHome()
	if err != nil {
		return "", fmt.Errorf("find reasonix home: %w", err)
	}
	return filepath.Join(h, ".reasonix"), nil
}

// UserConfigPath returns the user config file inside home.
func UserConfigPath(home string) string {
	return filepath.Join(home, "config.toml")
}

// ProjectConfigPath returns the project config file inside projectDir.
func ProjectConfigPath(projectDir string) string {
	return filepath.Join(projectDir, ProjectFileName)
}

// DotEnvPath returns the file holding saved provider keys inside home.
func DotEnvPath(home string) string {
	return filepath.Join(home, ".env")
}
