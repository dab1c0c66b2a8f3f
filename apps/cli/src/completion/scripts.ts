/**
 * The completion scripts. Each is a thin shim: it hands the words of the command line to the hidden
 * `lintel __complete -- WORD... CURRENT` and offers what comes back (`value<TAB>description` lines, then
 * `:1` when file names fit, else `:0`), so the words offered are always those of the installed lintel.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

const bash = String.raw`# bash completion for lintel
# Load it now:        source <(lintel completion bash)
# or for every shell: lintel completion bash > ~/.local/share/bash-completion/completions/lintel

_lintel() {
    local i w out line rest trimmed start adjacent directive=:0
    local -a words=()
    # bash splits words at the '=', ':' and '@' of COMP_WORDBREAKS: join the pieces that touch in the
    # command line back into the words lintel sees
    local text=\${COMP_LINE-} pos=0 prev=
    text=\${text:0:\${COMP_POINT:-\${#text}}}
    for ((i = 0; i <= COMP_CWORD; i++)); do
        w=\${COMP_WORDS[i]-}
        if [[ -n $text ]]; then
            rest=\${text:pos}
            trimmed=\${rest#"\${rest%%[![:space:]]*}"}
            start=$((pos + \${#rest} - \${#trimmed}))
            adjacent=
            ((i > 0 && start == pos)) && adjacent=1
            pos=$((start + \${#w}))
        else
            adjacent=
            [[ $w =~ ^[=:@]+$ || $prev =~ ^[=:@]+$ ]] && adjacent=1
        fi
        prev=$w
        ((i == 0)) && continue
        if [[ -n $adjacent && \${#words[@]} -gt 0 ]]; then
            words[\${#words[@]}-1]+=$w
        else
            words+=("$w")
        fi
    done
    [[ \${#words[@]} -eq 0 ]] && words=('')
    local cur=\${words[\${#words[@]}-1]}
    # bash replaces only the end of the word: what follows its last '=' or ':', or its last '@' and
    # what follows (with those in COMP_WORDBREAKS); the candidates lose what comes before
    local breaks=\${COMP_WORDBREAKS//[^=:@]/} prefix=
    if [[ -n $breaks && $cur == *[$breaks]* ]]; then
        prefix=\${cur%"\${cur##*[$breaks]}"}
        prefix=\${prefix%@}
    fi

    out=$(lintel __complete -- "\${words[@]}" 2>/dev/null) || return 0
    COMPREPLY=()
    while IFS= read -r line; do
        [[ -z $line ]] && continue
        if [[ $line == :[0-9] ]]; then
            directive=$line
            continue
        fi
        line=\${line%%$'\t'*}
        [[ $line == "$prefix"* ]] && COMPREPLY+=("\${line#"$prefix"}")
    done <<< "$out"

    if [[ \${#COMPREPLY[@]} -eq 0 && $directive == :1 ]]; then
        compopt -o filenames 2>/dev/null
        local IFS=$'\n'
        COMPREPLY=($(compgen -f -- "$cur"))
        return 0
    fi
    # a list goes on after its comma
    if [[ \${#COMPREPLY[@]} -eq 1 && \${COMPREPLY[0]} == *, ]]; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}
complete -F _lintel lintel
`;

const zsh = String.raw`#compdef lintel
# zsh completion for lintel
# Load it now:        source <(lintel completion zsh)
# or for every shell: lintel completion zsh > "\${fpath[1]}/_lintel"

_lintel() {
    local line directive=:0
    local -a lines described
    lines=("\${(@f)$(lintel __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
    for line in "\${lines[@]}"; do
        [[ -z $line ]] && continue
        if [[ $line == :<-> ]]; then
            directive=$line
            continue
        fi
        if [[ $line == *$'\t'* ]]; then
            described+=("\${\${line%%$'\t'*}//:/\\:}:\${line#*$'\t'}")
        else
            described+=("\${line//:/\\:}")
        fi
    done
    if (( \${#described} )); then
        _describe -t lintel lintel described
    elif [[ $directive == :1 ]]; then
        _files
    fi
}

if [[ \${funcstack[1]} == _lintel ]]; then
    _lintel "$@"
else
    compdef _lintel lintel
fi
`;

const fish = String.raw`# fish completion for lintel
# Load it now:        lintel completion fish | source
# or for every shell: lintel completion fish > ~/.config/fish/completions/lintel.fish

function __lintel_complete
    set -l words (commandline -opc)[2..-1] (commandline -ct)
    set -l directive :0
    set -l found 0
    for line in (lintel __complete -- $words 2>/dev/null)
        if string match -qr '^:[0-9]$' -- $line
            set directive $line
        else if test -n "$line"
            set found 1
            echo $line
        end
    end
    if test $found -eq 0 -a "$directive" = :1
        __fish_complete_path (commandline -ct)
    end
end

complete -c lintel -f -a '(__lintel_complete)'
`;

/** `String.raw` keeps `\${`; the scripts want a plain `${`. */
const unescape = (s: string) => s.replace(/\\\$\{/g, '${');

export function completionScript(shell: Shell): string {
  return unescape({ bash, zsh, fish }[shell]);
}
