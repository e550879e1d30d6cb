//! prex's `help` texts: one per command keyword and per topic (intro,
//! functions, kernel_mode, probe_spec, processes, set_spec). Written for
//! os2trace; the topics and commands are prex's.

/// The text for `help` with no argument.
pub const SUMMARY: &str = "\
Commands (type \"help <command>\" or \"help <topic>\" for more):
    help [topic|command]           list [specs] probes <selector>
    continue                       list values [specs]
    quit [kill|resume|suspend]     list sets|history|tracefile|fcns
    enable <selector>              create $set <exprlist>
    disable <selector>             create &fcn <entry>
    trace <selector>               source <file>
    untrace <selector>             ktrace [on|off]           (kernel mode)
    connect &fcn <selector>        buffer [alloc [size]|dealloc] (kernel mode)
    clear <selector>               pfilter [on|off|add|delete] (kernel mode)
Topics: intro functions kernel_mode probe_spec processes set_spec
";

/// The help text of a command keyword or topic, or None.
pub fn text(topic: &str) -> Option<&'static str> {
    Some(match topic {
        "intro" => {
            "\
prex controls the TNF probes compiled into the program os2trace runs.
The program is stopped before it starts: select probes, enable them (user
probes are traced by default), then \"continue\". Events go to the trace
file (list tracefile); read it with \"os2trace tnfdump\".
"
        }
        "functions" => {
            "\
A probe can call functions when it fires. &debug is predefined: it writes
the probe's name and arguments to stderr. \"connect &debug <selector>\"
attaches it, \"clear <selector>\" removes every connected function, and
\"create &name <entry>\" names another entry point.
"
        }
        "kernel_mode" => {
            "\
prex -k controls os2trace's system probes (API calls, module loads, thread
switches) instead of a program's. Kernel probes must be traced and enabled;
\"buffer alloc [size]\" makes the buffer, \"ktrace on\" starts tracing,
\"pfilter\" limits it to some processes.
"
        }
        "probe_spec" => {
            "\
A selector is $set or a list of exprs, their union. An expr is attr=value
or a bare value (keys=value). Each side is an identifier or 'quoted string'
(exact) or /regex/ (ed-style, unanchored). Attributes: name keys file line
slots object enable trace funcs, and vendor attributes (sunw%debug).
"
        }
        "processes" => {
            "\
The target is the program os2trace started. \"continue\" runs it; Ctrl-C
stops it and returns to the prompt; \"quit\" kills it (\"quit resume\" lets
it run to the end untraced by prex, \"quit suspend\" leaves it stopped).
"
        }
        "set_spec" => {
            "\
\"create $name <exprlist>\" names a selector. A set keeps its exprs, not
its probes, and is evaluated again at each use. $all is predefined as
keys=/.*/.
"
        }
        "help" => "help [topic|command]: this help.\n",
        "continue" => "continue: resume the target program.\n",
        "quit" => "quit [kill|resume|suspend]: leave prex.\n",
        "enable" => "enable <selector>: the probes fire.\n",
        "disable" => "disable <selector>: the probes do nothing.\n",
        "trace" => "trace <selector>: enabled probes write trace records.\n",
        "untrace" => "untrace <selector>: the probes write no trace records.\n",
        "connect" => "connect &fcn <selector>: enabled probes call the function.\n",
        "clear" => "clear <selector>: disconnect every function.\n",
        "create" => "create $set <exprlist> | create &fcn <entry>: name a set or a function.\n",
        "source" => "source <file>: read commands from a file.\n",
        "list" => {
            "list [specs] probes <selector> | list values [specs] | list sets|history|tracefile|fcns\n"
        }
        "ktrace" => "ktrace [on|off]: kernel tracing on or off (kernel mode).\n",
        "buffer" => {
            "buffer [alloc [size[k|m]] | dealloc]: the kernel trace buffer (kernel mode).\n"
        }
        "pfilter" => {
            "pfilter [on|off|add pids|delete pids]: kernel process filter (kernel mode).\n"
        }
        _ => return None,
    })
}
