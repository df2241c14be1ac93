// The similarity batch job's driver: JPlag (de.jplag, from Maven Central) over one
// directory of submissions, one subdirectory per student, with optional starter code
// excluded; writes every pair's similarity and matched line ranges as JSON.
// Run as a single-file program (no build step):
//   java -cp 'LIB/*' Similarity.java LANGUAGE SUBMISSIONS BASE|- MIN_TOKENS OUT.json
import com.fasterxml.jackson.databind.ObjectMapper;
import de.jplag.JPlag;
import de.jplag.JPlagComparison;
import de.jplag.JPlagResult;
import de.jplag.Match;
import de.jplag.Submission;
import de.jplag.Token;
import de.jplag.options.JPlagOptions;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

public class Similarity {
    static de.jplag.Language language(String name) {
        return switch (name) {
            case "java" -> new de.jplag.java.Language();
            case "cpp" -> new de.jplag.cpp.Language();
            case "python3" -> new de.jplag.python3.Language();
            default -> throw new IllegalArgumentException("no JPlag language " + name);
        };
    }

    static Map<String, Object> span(Submission s, int from, int to) {
        List<Token> tokens = s.getTokenList();
        Token a = tokens.get(from), b = tokens.get(to);
        Map<String, Object> m = new LinkedHashMap<>();
        Path root = s.getRoot().toPath().toAbsolutePath();
        m.put("file", root.relativize(a.getFile().toPath().toAbsolutePath()).toString());
        m.put("start", a.getLine());
        m.put("end", Math.max(a.getLine(), b.getLine()));
        return m;
    }

    public static void main(String[] args) throws Exception {
        de.jplag.Language lang = language(args[0]);
        JPlagOptions options = new JPlagOptions(lang, Set.of(new File(args[1])), Set.of())
            .withMinimumTokenMatch(Integer.parseInt(args[3]))
            .withMaximumNumberOfComparisons(JPlagOptions.SHOW_ALL_COMPARISONS);
        if (!args[2].equals("-")) {
            options = options.withBaseCodeSubmissionDirectory(new File(args[2]));
        }
        JPlagResult result = new JPlag(options).run();
        List<Map<String, Object>> pairs = new ArrayList<>();
        for (JPlagComparison c : result.getAllComparisons()) {
            List<Map<String, Object>> matches = new ArrayList<>();
            for (Match m : c.matches()) {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("first", span(c.firstSubmission(), m.startOfFirst(), m.startOfFirst() + m.length() - 1));
                one.put("second", span(c.secondSubmission(), m.startOfSecond(), m.startOfSecond() + m.length() - 1));
                one.put("tokens", m.length());
                matches.add(one);
            }
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("first", c.firstSubmission().getName());
            p.put("second", c.secondSubmission().getName());
            p.put("similarity", c.similarity());
            p.put("max_similarity", c.maximalSimilarity());
            p.put("matches", matches);
            pairs.add(p);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("tool", "JPlag " + JPlag.JPLAG_VERSION);
        out.put("language", args[0]);
        out.put("submissions", result.getNumberOfSubmissions());
        out.put("pairs", pairs);
        new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(Path.of(args[4]).toFile(), out);
    }
}
