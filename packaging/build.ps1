# Builds dist\VoiceDesk\ on Windows and runs its self-test. Minimal mirror of packaging/build.sh.
# NOT yet run on Windows: it follows the Linux script step for step; see docs/packaging.md.
#   powershell -ExecutionPolicy Bypass -File packaging\build.ps1
# Needs Python 3.11 or 3.12 on PATH (py launcher). For a CUDA build, install a CUDA torch wheel into
# .venv before running this (docs/packaging.md).
$ErrorActionPreference = "Stop"
$root = Split-Path -Parent $PSScriptRoot
Set-Location $root
$py = Join-Path $root ".venv\Scripts\python.exe"

if (-not (Test-Path $py)) {
    py -3.11 -m venv .venv
}
# Same order as packaging/bootstrap.sh: torch pinned first, the model code without its dependencies.
& $py -m pip install -q --disable-pip-version-check "torch==2.13.0"
& $py -m pip install -q --disable-pip-version-check --no-deps "kokoro==0.9.4" "resemblyzer==0.1.4" "webrtcvad-wheels==2.0.14.post1" "loguru>=0.7"
& $py -m pip install -q --disable-pip-version-check -e ".[dev]"
if ($LASTEXITCODE -ne 0) { throw "installing VoiceDesk into .venv failed" }

& $py packaging\prepare_models.py --out models
if ($LASTEXITCODE -ne 0) { throw "converting the Kokoro weights failed" }
# Kokoro's English and other stock voices (kokoro-js from the npm registry, checked) into models/, and their
# profile for clone reports.
& $py -m voicedesk voices add-stock --if-missing
if ($LASTEXITCODE -ne 0) { Write-Warning "the stock voices were not all added and profiled; the bundle may have only the five Japanese-trained ones" }

& $py -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath build\pyinstaller packaging\voicedesk.spec
if ($LASTEXITCODE -ne 0) { throw "PyInstaller failed" }
$app = Join-Path $root "dist\VoiceDesk"
New-Item -ItemType Directory -Force (Join-Path $app "models") | Out-Null
Copy-Item packaging\models-README.txt (Join-Path $app "models\README.txt")
$size = (Get-ChildItem $app -Recurse | Measure-Object -Property Length -Sum).Sum / 1MB
Write-Host ("built {0} ({1:N0} MB)" -f $app, $size)

# The executable is windowed (no console), so the self-test writes its summary to a file.
$work = Join-Path ([System.IO.Path]::GetTempPath()) ("voicedesk-self-test-" + [guid]::NewGuid())
$report = Join-Path $work "report.json"
$env:VOICEDESK_HOME = Join-Path $work "home"
$proc = Start-Process -FilePath (Join-Path $app "VoiceDesk.exe") -Wait -PassThru -NoNewWindow `
    -ArgumentList "--self-test", "--report", "`"$report`"", "--out", "`"$work\out`""
Remove-Item Env:VOICEDESK_HOME
if (-not (Test-Path $report)) { throw "the self-test wrote no report (exit code $($proc.ExitCode))" }
Get-Content $report
$summary = Get-Content $report -Raw | ConvertFrom-Json
if ($proc.ExitCode -ne 0 -or -not $summary.ok) {
    throw "frozen self-test FAILED at step '$($summary.failed_step)': $($summary.error)"
}
Write-Host "OK: frozen self-test passed"
